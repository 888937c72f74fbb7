package sim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A trace is JSON Lines: one workload a line, for instance
//
//	{"at":"1.5s","namespace":"team-a","name":"train-1","queue":"lq","priority":100,"class":"train",
//	 "runtime":"20m","podSets":[{"name":"main","count":4,"requests":{"cpu":"2","nvidia.com/gpu":"1"}}]}
//
// "at" is the creation time from the start of the trace; "runtime" is how
// long the workload runs once admitted; "seenAfter", when set, is how long
// after its creation the scheduler first saw it (a replay of a live run).
// Lines starting with # are comments.

// TraceLine is one line of a trace.
type TraceLine struct {
	At            string        `json:"at"`
	SeenAfter     string        `json:"seenAfter,omitempty"`
	Namespace     string        `json:"namespace"`
	Name          string        `json:"name"`
	Queue         string        `json:"queue"`
	Class         string        `json:"class,omitempty"`
	Priority      int32         `json:"priority,omitempty"`
	PriorityClass string        `json:"priorityClass,omitempty"`
	Runtime       string        `json:"runtime"`
	MaxExecution  string        `json:"maxExecution,omitempty"`
	PodSets       []TracePodSet `json:"podSets"`
}

// TracePodSet is a pod set of a trace line: count pods, each requesting
// the resources.
type TracePodSet struct {
	Name     string            `json:"name"`
	Count    int32             `json:"count"`
	Requests map[string]string `json:"requests"`
}

// ReadTrace reads a trace.
func ReadTrace(r io.Reader) ([]Workload, error) {
	var out []Workload
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var tl TraceLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tl); err != nil {
			return nil, fmt.Errorf("trace line %d: %w", n, err)
		}
		w, err := tl.workload()
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", n, err)
		}
		out = append(out, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	return out, nil
}

func (tl TraceLine) workload() (Workload, error) {
	w := Workload{Namespace: tl.Namespace, Name: tl.Name, Queue: kueue.LocalQueueName(tl.Queue), Class: tl.Class,
		Priority: tl.Priority, PriorityClass: tl.PriorityClass}
	var err error
	if w.Arrive, err = duration("at", tl.At); err != nil {
		return w, err
	}
	if w.Runtime, err = duration("runtime", tl.Runtime); err != nil {
		return w, err
	}
	if tl.SeenAfter != "" {
		if w.SeenAfter, err = duration("seenAfter", tl.SeenAfter); err != nil {
			return w, err
		}
	}
	if tl.MaxExecution != "" {
		if w.MaxExecution, err = duration("maxExecution", tl.MaxExecution); err != nil {
			return w, err
		}
	}
	for i, ps := range tl.PodSets {
		if ps.Count < 0 {
			return w, fmt.Errorf("podSets[%d].count: %d is negative", i, ps.Count)
		}
		req := corev1.ResourceList{}
		for name, v := range ps.Requests {
			q, err := resource.ParseQuantity(v)
			if err != nil || q.Sign() < 0 {
				return w, fmt.Errorf("podSets[%d].requests[%s]: %q is not a non-negative quantity", i, name, v)
			}
			req[corev1.ResourceName(name)] = q
		}
		name := ps.Name
		if name == "" {
			name = string(kueue.DefaultPodSetName)
		}
		w.PodSets = append(w.PodSets, kueue.PodSet{Name: kueue.PodSetReference(name), Count: ps.Count,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main",
				Resources: corev1.ResourceRequirements{Requests: req}}}}}})
	}
	return w, nil
}

func duration(field, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative duration", field, s)
	}
	return d, nil
}

// WriteTrace writes a trace.
func WriteTrace(w io.Writer, trace []Workload) error {
	enc := json.NewEncoder(w)
	for _, wl := range trace {
		if err := enc.Encode(LineOf(wl)); err != nil {
			return fmt.Errorf("writing trace: %w", err)
		}
	}
	return nil
}

// LineOf is the trace line of a workload: its pod sets' requests summed
// over each pod's containers.
func LineOf(w Workload) TraceLine {
	tl := TraceLine{At: w.Arrive.String(), Namespace: w.Namespace, Name: w.Name, Queue: string(w.Queue), Class: w.Class,
		Priority: w.Priority, PriorityClass: w.PriorityClass, Runtime: w.Runtime.String()}
	if w.MaxExecution > 0 {
		tl.MaxExecution = w.MaxExecution.String()
	}
	if w.SeenAfter > 0 {
		tl.SeenAfter = w.SeenAfter.String()
	}
	for _, ps := range w.PodSets {
		req := corev1.ResourceList{}
		for _, c := range ps.Template.Spec.Containers {
			for name, q := range c.Resources.Requests {
				cur := req[name]
				cur.Add(q)
				req[name] = cur
			}
		}
		out := TracePodSet{Name: string(ps.Name), Count: ps.Count, Requests: map[string]string{}}
		for name, q := range req {
			out.Requests[string(name)] = q.String()
		}
		tl.PodSets = append(tl.PodSets, out)
	}
	return tl
}
