package compat

import (
	"fmt"
	"sort"
	"strings"
)

// Unset is how an absent fact is shown in a Mismatch.
const Unset = "<unset>"

// Mismatch is one fact whose value differs between the reference and ours.
type Mismatch struct {
	Path string
	Fact string
	Want string
	Got  string
}

func (m Mismatch) String() string {
	return fmt.Sprintf("%s: %s: want %s, got %s", m.Path, m.Fact, m.Want, m.Got)
}

// Report is the difference between a reference snapshot and ours.
type Report struct {
	// Missing lists reference paths absent from ours. Only the top-most
	// missing path of a subtree is listed; its descendants are implied.
	Missing []string
	// Mismatched lists facts that differ on paths present in both.
	Mismatched []Mismatch
	// Extra lists paths only in ours (top-most only). Extra paths are not
	// an incompatibility by themselves.
	Extra []string
}

// Clean reports whether there is nothing missing and nothing mismatched.
func (r Report) Clean() bool {
	return len(r.Missing) == 0 && len(r.Mismatched) == 0
}

// Compare diffs ours against the reference snapshot ref.
func Compare(ref, ours *Snapshot) Report {
	var r Report
	for path, rn := range ref.Nodes {
		on, ok := ours.Nodes[path]
		if !ok {
			if !parentAbsent(ours, rn.Parent) {
				r.Missing = append(r.Missing, path)
			}
			continue
		}
		r.Mismatched = append(r.Mismatched, diffFacts(path, rn.Facts, on.Facts)...)
	}
	for path, on := range ours.Nodes {
		if _, ok := ref.Nodes[path]; !ok && !parentAbsent(ref, on.Parent) {
			r.Extra = append(r.Extra, path)
		}
	}
	sort.Strings(r.Missing)
	sort.Strings(r.Extra)
	sort.Slice(r.Mismatched, func(i, j int) bool {
		a, b := r.Mismatched[i], r.Mismatched[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Fact < b.Fact
	})
	return r
}

// parentAbsent reports whether the non-root parent path is absent from other.
// A present parent implies present ancestors, since a path only exists when
// the walk reached it through its parent.
func parentAbsent(other *Snapshot, parent string) bool {
	if parent == "" {
		return false
	}
	_, ok := other.Nodes[parent]
	return !ok
}

func diffFacts(path string, want, got Facts) []Mismatch {
	var out []Mismatch
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			g = Unset
		}
		if g != w {
			out = append(out, Mismatch{Path: path, Fact: name, Want: w, Got: g})
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			out = append(out, Mismatch{Path: path, Fact: name, Want: Unset, Got: g})
		}
	}
	return out
}

// String renders the report, one item per line.
func (r Report) String() string {
	var b strings.Builder
	for _, p := range r.Missing {
		fmt.Fprintf(&b, "  missing:    %s\n", p)
	}
	for _, m := range r.Mismatched {
		fmt.Fprintf(&b, "  mismatched: %s\n", m)
	}
	for _, p := range r.Extra {
		fmt.Fprintf(&b, "  extra:      %s\n", p)
	}
	return b.String()
}
