// Package auditlog counts a user's API writes in a kube-apiserver audit log
// written in JSON (one audit.k8s.io/v1 Event per line). Only entries of the
// ResponseComplete stage count, so that each request is counted once
// whatever stages the policy keeps; a request the server refused (a
// conflict, say) still counts as a write the client made, and is also
// counted as failed.
package auditlog

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
)

// WriteVerbs are the verbs counted as writes.
var WriteVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// stageComplete is the stage of the entry logged once a response was sent.
const stageComplete = "ResponseComplete"

// entry holds the fields of an audit Event the counts need.
type entry struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// ResourceWrites are the writes to one resource (or resource/subresource).
type ResourceWrites struct {
	Writes int64            `json:"writes"`
	Failed int64            `json:"failed,omitempty"`
	ByVerb map[string]int64 `json:"byVerb"`
}

// Counts are the writes found in a log.
type Counts struct {
	// Writes counts every write request; Failed those answered with a
	// status code of 400 or more.
	Writes int64 `json:"writes"`
	Failed int64 `json:"failed"`
	// ByVerb splits Writes by verb.
	ByVerb map[string]int64 `json:"byVerb"`
	// ByResource splits Writes by resource, keyed "resource" or
	// "resource/subresource" (e.g. "workloads/status").
	ByResource map[string]*ResourceWrites `json:"byResource"`
	// Malformed counts lines that were not JSON (e.g. a line cut short
	// when the server stopped).
	Malformed int `json:"malformed,omitempty"`
}

// NewCounts returns empty counts.
func NewCounts() *Counts {
	return &Counts{ByVerb: map[string]int64{}, ByResource: map[string]*ResourceWrites{}}
}

// Parse counts the writes of user in the log read from r; an empty user
// counts everybody's.
func Parse(r io.Reader, user string) (*Counts, error) {
	c := NewCounts()
	sc := bufio.NewScanner(r)
	// Metadata-level entries are short, but leave room for long URIs.
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			c.Malformed++
			continue
		}
		c.add(&e, user)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading audit log: %w", err)
	}
	return c, nil
}

// ParseFile counts the writes of user in the log file at path.
func ParseFile(path, user string) (*Counts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening audit log: %w", err)
	}
	defer f.Close()
	return Parse(f, user)
}

func (c *Counts) add(e *entry, user string) {
	if e.Stage != stageComplete || !slices.Contains(WriteVerbs, e.Verb) {
		return
	}
	if user != "" && e.User.Username != user {
		return
	}
	key := "unknown"
	if e.ObjectRef != nil && e.ObjectRef.Resource != "" {
		key = e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			key += "/" + e.ObjectRef.Subresource
		}
	}
	rw := c.ByResource[key]
	if rw == nil {
		rw = &ResourceWrites{ByVerb: map[string]int64{}}
		c.ByResource[key] = rw
	}
	c.Writes++
	rw.Writes++
	c.ByVerb[e.Verb]++
	rw.ByVerb[e.Verb]++
	if e.ResponseStatus != nil && e.ResponseStatus.Code >= 400 {
		c.Failed++
		rw.Failed++
	}
}

// To sums the writes to the given resource keys.
func (c *Counts) To(keys ...string) int64 {
	var n int64
	for _, k := range keys {
		if rw := c.ByResource[k]; rw != nil {
			n += rw.Writes
		}
	}
	return n
}

// Resources lists the resource keys, most written first (ties by name).
func (c *Counts) Resources() []string { return SortedResources(c.ByResource) }

// SortedResources lists the keys of m, most written first (ties by name).
func SortedResources(m map[string]*ResourceWrites) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := m[keys[i]].Writes, m[keys[j]].Writes
		if a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	return keys
}
