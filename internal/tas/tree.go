package tas

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/resources"
)

// Node is one node's labels and free capacity (allocatable minus what pods already use).
type Node struct {
	Name   string
	Labels map[string]string
	Free   resources.Requests
}

// Tree holds the domains of one Topology (levels widest first, node label keys) over a flavor's nodes.
// Its structure is shared between clones; only the free capacity is copied.
type Tree struct {
	*shape
	free []resources.Amount // free[node*len(names)+r]
	// off marks nodes that take no pods (Masked); nil when none is.
	off []bool
}

// shape is the immutable part of a Tree.
type shape struct {
	levels []string
	names  []corev1.ResourceName // resources present on some node, sorted
	pods   int                   // index of "pods" in names, or -1
	has    []bool                // has[node*len(names)+r]: the node reports resource r
	nodes  []string              // node names, in domain order
	doms   [][]domain            // domains per level, sorted by their values
	byFull map[string]int32      // all values joined by keySep -> lowest-level domain
	byLast map[string]int32      // lowest-level value -> first lowest-level domain with it
}

// domain is one domain of a level. Its children (the next level's domains,
// or nodes at the lowest level) are the range [lo, hi).
type domain struct {
	value  string // label value at this level
	parent int32  // index in the level above, -1 at the top
	lo, hi int32
}

const keySep = "\x00"

// NewTree builds the tree of levels over nodes. Nodes missing a label for some level are left out.
func NewTree(levels []string, nodes []Node) *Tree {
	type entry struct {
		node   *Node
		values []string
	}
	var kept []entry
	for i := range nodes {
		if vals, ok := labelValues(levels, nodes[i].Labels); ok {
			kept = append(kept, entry{&nodes[i], vals})
		}
	}
	slices.SortStableFunc(kept, func(a, b entry) int {
		if c := slices.Compare(a.values, b.values); c != 0 {
			return c
		}
		return cmp.Compare(a.node.Name, b.node.Name)
	})

	s := &shape{levels: slices.Clone(levels), pods: -1, doms: make([][]domain, len(levels))}
	names := map[corev1.ResourceName]bool{}
	for _, e := range kept {
		for name := range e.node.Free {
			names[name] = true
		}
	}
	s.names = slices.Sorted(maps.Keys(names))
	s.pods = slices.Index(s.names, corev1.ResourcePods)
	t := &Tree{shape: s}
	nr := len(s.names)
	s.has = make([]bool, len(kept)*nr)
	t.free = make([]resources.Amount, len(kept)*nr)
	s.nodes = make([]string, len(kept))
	for n, e := range kept {
		s.nodes[n] = e.node.Name
		for r, name := range s.names {
			a, ok := e.node.Free[name]
			s.has[n*nr+r], t.free[n*nr+r] = ok, a
		}
	}
	if len(levels) > 0 {
		values := make([][]string, len(kept))
		for i, e := range kept {
			values[i] = e.values
		}
		s.buildDomains(values)
	}
	return t
}

func labelValues(levels []string, labels map[string]string) ([]string, bool) {
	vals := make([]string, len(levels))
	for i, key := range levels {
		v, ok := labels[key]
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}

// buildDomains creates the domains of every level from the values of the
// nodes (sorted), and the lookup maps of the lowest level.
func (s *shape) buildDomains(values [][]string) {
	last := len(s.levels) - 1
	s.byFull = make(map[string]int32)
	s.byLast = make(map[string]int32)
	for i, vals := range values {
		first := 0 // the widest level whose domain differs from the previous node's
		if i > 0 {
			for first <= last && vals[first] == values[i-1][first] {
				first++
			}
		}
		for l := first; l <= last; l++ {
			d := domain{value: vals[l], parent: -1, lo: int32(i)}
			if l < last {
				d.lo = int32(len(s.doms[l+1]))
			}
			if l > 0 {
				d.parent = int32(len(s.doms[l-1]) - 1)
			}
			s.doms[l] = append(s.doms[l], d)
			if l > 0 {
				s.doms[l-1][d.parent].hi = int32(len(s.doms[l]))
			}
		}
		leaf := int32(len(s.doms[last]) - 1)
		s.doms[last][leaf].hi = int32(i + 1)
		if first <= last {
			s.byFull[strings.Join(vals, keySep)] = leaf
			if _, seen := s.byLast[vals[last]]; !seen {
				s.byLast[vals[last]] = leaf
			}
		}
	}
}

// Levels returns the level label keys, widest first.
func (t *Tree) Levels() []string { return slices.Clone(t.levels) }

// Clone returns an independent copy: placing on or using it leaves t unchanged.
func (t *Tree) Clone() *Tree {
	return &Tree{shape: t.shape, free: slices.Clone(t.free), off: slices.Clone(t.off)}
}

// Masked returns a copy in which only the nodes allowed accepts (by name)
// take pods: the nodes a PodSet's own node selector or affinity admits.
// An assignment placed on it is taken from the unmasked tree with Use.
func (t *Tree) Masked(allowed func(node string) bool) *Tree {
	m := t.Clone()
	m.off = make([]bool, len(t.nodes))
	for n, name := range t.nodes {
		m.off[n] = !allowed(name)
	}
	return m
}

// values returns the values of levels 0..l of domain d at level l.
func (s *shape) values(l int, d int32) []string {
	out := make([]string, l+1)
	for ; l >= 0; l-- {
		out[l] = s.doms[l][d].value
		d = s.doms[l][d].parent
	}
	return out
}

// assignmentLevels returns the levels this tree's assignments store: only
// the host name when the Topology ends with kubernetes.io/hostname and the
// host names are unique in the tree, as Kueue does; all levels when some
// host name repeats (Kueue's scalability runner names its fake nodes
// node-0, node-1, ... in every rack), so that an assignment still names
// each node without doubt and the pods' node selectors match one node.
func (t *Tree) assignmentLevels() []string {
	levels := AssignmentLevels(t.levels)
	if last := len(t.levels) - 1; len(levels) < len(t.levels) && len(t.byLast) < len(t.doms[last]) {
		return slices.Clone(t.levels)
	}
	return levels
}

// NodePerDomain reports whether every lowest-level domain is one node (the
// Topology ends with the host): Release is then exact.
func (t *Tree) NodePerDomain() bool {
	return len(t.levels) > 0 && len(t.doms[len(t.levels)-1]) == len(t.nodes)
}

// Equal reports whether two trees have the same domains, nodes and free
// capacity.
func (t *Tree) Equal(o *Tree) bool {
	if t.shape != o.shape && (!slices.Equal(t.levels, o.levels) || !slices.Equal(t.nodes, o.nodes) || !slices.Equal(t.names, o.names)) {
		return false
	}
	return slices.Equal(t.free, o.free) && slices.Equal(t.off, o.off)
}
