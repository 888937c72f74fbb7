package tas

import (
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// maxFit caps the pods counted on one node (a pod requesting nothing fits
// without limit); it keeps sums over many nodes far from overflowing.
const maxFit = math.MaxInt32

// podRequest is the request of one pod over the tree's resources.
type podRequest struct {
	amounts []resources.Amount  // by index in names; 0 means not requested
	missing corev1.ResourceName // a requested resource that no node has, if any
}

// podRequest converts perPod. Every pod also takes one "pods" from nodes
// that report that resource, whatever perPod says about it.
func (t *Tree) podRequest(perPod resources.Requests) podRequest {
	req := podRequest{amounts: make([]resources.Amount, len(t.names))}
	for name, a := range perPod {
		if name == corev1.ResourcePods || a <= 0 {
			continue
		}
		r, found := slices.BinarySearch(t.names, name)
		if !found {
			if req.missing == "" || name < req.missing {
				req.missing = name
			}
			continue
		}
		req.amounts[r] = a
	}
	if t.pods >= 0 {
		req.amounts[t.pods] = resources.Unit(corev1.ResourcePods)
	}
	return req
}

// fit returns how many pods of req node n takes.
func (t *Tree) fit(n int, req *podRequest) int64 {
	if req.missing != "" || (t.off != nil && t.off[n]) {
		return 0
	}
	best := int64(maxFit)
	base := n * len(t.names)
	for r, a := range req.amounts {
		if a == 0 {
			continue
		}
		if !t.has[base+r] {
			if r == t.pods {
				continue // a node without a pod limit
			}
			return 0
		}
		free := t.free[base+r]
		if free < a {
			return 0
		}
		best = min(best, free/a)
	}
	return best
}

// take subtracts n pods of req from node i.
func (t *Tree) take(i int, n int64, req *podRequest) {
	base := i * len(t.names)
	for r, a := range req.amounts {
		if a != 0 && t.has[base+r] {
			t.free[base+r] = resources.Sub(t.free[base+r], resources.Mul(a, n))
		}
	}
}

// give adds n pods of req back to node i.
func (t *Tree) give(i int, n int64, req *podRequest) {
	base := i * len(t.names)
	for r, a := range req.amounts {
		if a != 0 && t.has[base+r] {
			t.free[base+r] = resources.Add(t.free[base+r], resources.Mul(a, n))
		}
	}
}

// Release gives back what Use took for an assignment. That is exact when
// every domain of the assignment is a single node (the usual case: the
// Topology's lowest level is the host); otherwise Use's split among a
// domain's nodes cannot be undone, and Release reports false and changes
// nothing: the caller builds the tree again. Domains it cannot find are
// ignored, as Use ignores them.
func (t *Tree) Release(a *kueue.TopologyAssignment, perPod resources.Requests) bool {
	domains, err := Domains(a)
	if err != nil || len(domains) == 0 {
		return true
	}
	find := t.finder(a.Levels)
	if find == nil {
		return true
	}
	last := len(t.levels) - 1
	nodes := make([]int32, len(domains))
	for i, d := range domains {
		leaf, ok := find(d.Values)
		if !ok {
			nodes[i] = -1
			continue
		}
		dom := t.doms[last][leaf]
		if dom.hi-dom.lo != 1 {
			return false
		}
		nodes[i] = dom.lo
	}
	req := t.podRequest(perPod)
	for i, d := range domains {
		if nodes[i] >= 0 {
			t.give(int(nodes[i]), int64(d.Count), &req)
		}
	}
	return true
}

// Use subtracts the capacity a placed assignment takes: perPod × count in each of its domains. Domains
// it cannot find (node gone) are ignored. Used for admitted workloads and for admissions earlier in a cycle.
//
// In a lowest-level domain with several nodes, pods go to the nodes in name
// order, each taking what it fits; pods beyond that go to the first node.
func (t *Tree) Use(a *kueue.TopologyAssignment, perPod resources.Requests) {
	domains, err := Domains(a)
	if err != nil || len(domains) == 0 {
		return
	}
	find := t.finder(a.Levels)
	if find == nil {
		return
	}
	req := t.podRequest(perPod)
	for _, d := range domains {
		leaf, ok := find(d.Values)
		if !ok {
			continue
		}
		dom := t.doms[len(t.levels)-1][leaf]
		rest := int64(d.Count)
		for n := int(dom.lo); n < int(dom.hi) && rest > 0; n++ {
			k := min(rest, t.fit(n, &req))
			t.take(n, k, &req)
			rest -= k
		}
		if rest > 0 {
			t.take(int(dom.lo), rest, &req)
		}
	}
}

// finder returns a lookup of lowest-level domains by the values of levels,
// which must be the lowest levels of the tree; nil when they are not.
func (t *Tree) finder(levels []string) func([]string) (int32, bool) {
	k := len(t.levels) - len(levels)
	if len(levels) == 0 || k < 0 || !slices.Equal(t.levels[k:], levels) {
		return nil
	}
	byKey := t.byFull
	if k > 0 && len(levels) == 1 {
		byKey = t.byLast
	} else if k > 0 {
		byKey = make(map[string]int32)
		last := len(t.levels) - 1
		for leaf := range t.doms[last] {
			key := strings.Join(t.values(last, int32(leaf))[k:], keySep)
			if _, seen := byKey[key]; !seen {
				byKey[key] = int32(leaf)
			}
		}
	}
	return func(values []string) (int32, bool) {
		leaf, ok := byKey[strings.Join(values, keySep)]
		return leaf, ok
	}
}
