package workload

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// PodSetShape is what one PodSet asks for.
type PodSetShape struct {
	Name kueue.PodSetReference
	// Count is the number of pods; MinCount, when above 0, allows partial
	// admission down to that many.
	Count    int32
	MinCount int32
	// PerPod are the effective requests of one pod, including `pods`.
	PerPod resources.Requests
	// NodeSelector and RequiredAffinity restrict the flavors the PodSet may
	// use (only the keys a flavor defines in its nodeLabels are considered).
	NodeSelector     map[string]string
	RequiredAffinity *corev1.NodeSelector
	// Tolerations must tolerate a flavor's NoSchedule/NoExecute taints.
	Tolerations []corev1.Toleration
	// Topology is the PodSet's topology request (topology-aware
	// scheduling); nil when it has none.
	Topology *kueue.PodSetTopologyRequest
	// Resources lists the names in PerPod, sorted; set by NewShape.
	Resources []corev1.ResourceName
}

// Requests returns the total requests of count pods.
func (p *PodSetShape) Requests(count int32) resources.Requests {
	return p.PerPod.Scaled(int64(count))
}

// Shape is the scheduling-relevant content of a workload. Two workloads with
// equal Shapes get the same flavor assignment from the same quota state.
type Shape struct {
	PodSets []PodSetShape
	// Key identifies the shape; equal keys mean equal shapes.
	Key string
}

// HasPartialAdmission reports whether some PodSet may be admitted with fewer pods.
func (s *Shape) HasPartialAdmission() bool {
	return slices.ContainsFunc(s.PodSets, func(p PodSetShape) bool { return p.MinCount > 0 && p.MinCount < p.Count })
}

// NewShape builds a shape and computes its key.
func NewShape(podSets []PodSetShape) *Shape {
	s := &Shape{PodSets: podSets}
	for i := range podSets {
		podSets[i].Resources = podSets[i].PerPod.Names()
	}
	s.Key = shapeKey(podSets)
	return s
}

func shapeKey(podSets []PodSetShape) string {
	var b strings.Builder
	for i := range podSets {
		p := &podSets[i]
		fmt.Fprintf(&b, "%s:%d:%d{", p.Name, p.Count, p.MinCount)
		for _, name := range p.PerPod.Names() {
			fmt.Fprintf(&b, "%s=%d,", name, p.PerPod[name])
		}
		b.WriteString("}")
		writeSortedMap(&b, p.NodeSelector)
		if p.RequiredAffinity != nil {
			b.WriteString(p.RequiredAffinity.String())
		}
		for _, t := range p.Tolerations {
			b.WriteString(t.String())
		}
		if p.Topology != nil {
			writeTopology(&b, p.Topology)
		}
		b.WriteString(";")
	}
	return b.String()
}

// writeTopology writes what placement reads of a topology request.
func writeTopology(b *strings.Builder, t *kueue.PodSetTopologyRequest) {
	str := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	fmt.Fprintf(b, "topo(%s|%s|%t|%s|%d", str(t.Required), str(t.Preferred), t.Unconstrained != nil && *t.Unconstrained,
		str(t.PodSetSliceRequiredTopology), ptrOr(t.PodSetSliceSize))
	for _, c := range t.PodsetSliceRequiredTopologyConstraints {
		fmt.Fprintf(b, "|%s/%d", c.Topology, c.Size)
	}
	b.WriteString(")")
}

func ptrOr(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func writeSortedMap(b *strings.Builder, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString("[")
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + ",")
	}
	b.WriteString("]")
}

// Shapes interns shapes so that identical workloads share one Shape. It is
// safe for concurrent use.
type Shapes struct {
	mu     sync.Mutex
	byKey  map[string]*Shape
	refcnt map[*Shape]int
}

// NewShapes returns an empty table.
func NewShapes() *Shapes {
	return &Shapes{byKey: map[string]*Shape{}, refcnt: map[*Shape]int{}}
}

// Intern returns the table's copy of s, adding s if it is new, and counts a
// reference to it.
func (t *Shapes) Intern(s *Shape) *Shape {
	t.mu.Lock()
	defer t.mu.Unlock()
	if existing, ok := t.byKey[s.Key]; ok {
		t.refcnt[existing]++
		return existing
	}
	t.byKey[s.Key] = s
	t.refcnt[s] = 1
	return s
}

// Release drops a reference; a shape nobody uses is forgotten.
func (t *Shapes) Release(s *Shape) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refcnt[s]--; t.refcnt[s] <= 0 {
		delete(t.refcnt, s)
		if t.byKey[s.Key] == s {
			delete(t.byKey, s.Key)
		}
	}
}

// Len is the number of distinct shapes.
func (t *Shapes) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byKey)
}
