package tas

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Request asks for topology domains for Count pods of one PodSet.
type Request struct {
	Count  int32
	PerPod resources.Requests // requests of one pod; pods also count as 1 "pods" resource if the node's Free has corev1.ResourcePods
	// Required is a level label; all pods in one domain of this level.
	Required string
	// Preferred is a level label; try one domain of it, then wider levels, finally spread over top-level domains.
	Preferred string
	// Neither Required nor Preferred (Unconstrained or an implied request): spread anywhere.

	// Slices are optional layers, outermost first: each slice of Size pods
	// in one domain of Level (at or below Required/Preferred); an inner
	// layer's slices divide the outer layer's and its level is at or below
	// the outer one's. One layer is Kueue's podSetSliceRequiredTopology with
	// podSetSliceSize, several are its podsetSliceRequiredTopologyConstraints.
	Slices []Slice
}

// Slice is one layer of a sliced request: groups of Size pods that each
// share one domain of Level.
type Slice struct {
	Level string
	Size  int32
}

// SlicesOf returns the slice layers of a PodSet's topology request,
// outermost first: podSetSliceRequiredTopology with podSetSliceSize, or
// podsetSliceRequiredTopologyConstraints.
func SlicesOf(tr *kueue.PodSetTopologyRequest) []Slice {
	if tr == nil {
		return nil
	}
	var out []Slice
	if tr.PodSetSliceRequiredTopology != nil && tr.PodSetSliceSize != nil {
		out = append(out, Slice{Level: *tr.PodSetSliceRequiredTopology, Size: *tr.PodSetSliceSize})
	}
	for _, c := range tr.PodsetSliceRequiredTopologyConstraints {
		out = append(out, Slice{Level: c.Topology, Size: c.Size})
	}
	return out
}

// plan is the state of one Place call.
//
// Capacity is counted in units that change at the slice levels: at level l
// a unit is unitAt[l] pods (the size of the outermost layer whose level is
// l or deeper, or 1), so that a domain fits whole slices of every layer
// above or at it.
type plan struct {
	t      *Tree
	req    podRequest
	unitAt []int64
	fill   int // where an unconstrained request fills: the outermost slice level, or the lowest level
	caps   [][]int64
	// fillFiner is, per domain of the fill level, its capacity in the units
	// one level down (pods without slices), to break ties between equal
	// slice counts; nil when units do not change there.
	fillFiner []int64
	out       []leafCount
}

type leafCount struct {
	leaf int32
	pods int64
}

// Place finds domains for a request without changing the tree; on failure the assignment is nil and
// the string explains why in words a user understands (e.g. `no domain of level "cloud.provider.com/topology-rack" fits 10 pods; the largest fits 6`).
func (t *Tree) Place(req Request) (*kueue.TopologyAssignment, string) {
	if req.Count == 0 && len(t.levels) > 0 {
		return Encode(AssignmentLevels(t.levels), nil), ""
	}
	p, why := t.newPlan(req)
	if why != "" {
		return nil, why
	}
	need := int64(req.Count) / p.unitAt[0]
	if why := p.choose(req, need); why != "" {
		return nil, why
	}
	return p.encode(), ""
}

// newPlan checks the request and counts the capacity of every domain.
func (t *Tree) newPlan(req Request) (*plan, string) {
	switch {
	case req.Count < 0:
		return nil, fmt.Sprintf("pod count %d is negative", req.Count)
	case len(t.levels) == 0:
		return nil, "the topology has no levels"
	case req.Required != "" && req.Preferred != "":
		return nil, "a request sets both a required and a preferred level"
	}
	for _, level := range []string{req.Required, req.Preferred} {
		if level != "" && !slices.Contains(t.levels, level) {
			return nil, fmt.Sprintf("level %q is not in the topology (levels %s)", level, strings.Join(t.levels, ", "))
		}
	}
	p := &plan{t: t, fill: len(t.levels) - 1}
	if why := p.layers(req); why != "" {
		return nil, why
	}
	if len(t.nodes) == 0 {
		return nil, fmt.Sprintf("no node has the labels of every topology level (%s)", strings.Join(t.levels, ", "))
	}
	p.req = t.podRequest(req.PerPod)
	if p.req.missing != "" {
		return nil, fmt.Sprintf("no node in the topology has resource %q", p.req.missing)
	}
	p.count()
	return p, ""
}

// layers checks the request's slice layers and sets the units per level.
func (p *plan) layers(req Request) string {
	levels := p.t.levels
	p.unitAt = make([]int64, len(levels))
	for l := range p.unitAt {
		p.unitAt[l] = 1
	}
	top := cmp.Or(req.Required, req.Preferred)
	prev := -1
	for i, s := range req.Slices {
		l := slices.Index(levels, s.Level)
		switch {
		case l < 0:
			return fmt.Sprintf("level %q is not in the topology (levels %s)", s.Level, strings.Join(levels, ", "))
		case s.Size < 1:
			return fmt.Sprintf("slice size %d is not positive", s.Size)
		case top != "" && l < slices.Index(levels, top):
			return fmt.Sprintf("slice level %q is wider than level %q", s.Level, top)
		case i > 0 && l < prev:
			return fmt.Sprintf("slice level %q is wider than the enclosing slice level %q", s.Level, req.Slices[i-1].Level)
		case i > 0 && req.Slices[i-1].Size%s.Size != 0:
			return fmt.Sprintf("slices of %d pods do not divide into slices of %d", req.Slices[i-1].Size, s.Size)
		case i == 0 && req.Count%s.Size != 0:
			return fmt.Sprintf("%d pods do not divide into slices of %d", req.Count, s.Size)
		}
		prev = l
	}
	for l := range levels {
		for _, s := range req.Slices {
			if slices.Index(levels, s.Level) >= l {
				p.unitAt[l] = int64(s.Size)
				break
			}
		}
	}
	if len(req.Slices) > 0 {
		p.fill = slices.Index(levels, req.Slices[0].Level)
	}
	return ""
}

// count fills caps bottom-up, each level in its own units: a domain fits
// as many of its units as its children's units make up.
func (p *plan) count() {
	t := p.t
	last := len(t.levels) - 1
	p.caps = make([][]int64, len(t.levels))
	for l := last; l >= 0; l-- {
		doms := t.doms[l]
		caps := make([]int64, len(doms))
		for d, dom := range doms {
			for c := dom.lo; c < dom.hi; c++ {
				if l == last {
					caps[d] += t.fit(int(c), &p.req)
				} else {
					caps[d] += p.caps[l+1][c]
				}
			}
		}
		if ratio := p.unitAt[l] / p.childUnit(l); ratio > 1 {
			if l == p.fill {
				p.fillFiner = slices.Clone(caps)
			}
			for d := range caps {
				caps[d] /= ratio
			}
		}
		p.caps[l] = caps
	}
}

// childUnit is the unit of level l's children: pods under the lowest level.
func (p *plan) childUnit(l int) int64 {
	if l == len(p.t.levels)-1 {
		return 1
	}
	return p.unitAt[l+1]
}

// choose picks the domains for need units by the request's mode.
func (p *plan) choose(req Request, need int64) string {
	levels := p.t.levels
	if req.Required != "" {
		l := slices.Index(levels, req.Required)
		if d := p.bestFit(l, need); d >= 0 {
			p.descend(l, d, need)
			return ""
		}
		return fmt.Sprintf("no domain of level %q fits %s; the largest fits %d", req.Required, p.units(need), slices.Max(p.caps[l]))
	}
	total := sum(p.caps[0])
	if total < need {
		return fmt.Sprintf("the topology fits only %d of %s", total, p.units(need))
	}
	if req.Preferred != "" {
		for l := slices.Index(levels, req.Preferred); l >= 0; l-- {
			if d := p.bestFit(l, need); d >= 0 {
				p.descend(l, d, need)
				return ""
			}
		}
		p.spread(0, 0, int32(len(p.caps[0])), need)
		return ""
	}
	p.fillFullest(p.fill, need)
	return ""
}

func (p *plan) units(n int64) string {
	if p.unitAt[0] == 1 {
		return fmt.Sprintf("%d pods", n)
	}
	return fmt.Sprintf("%d slices of %d pods", n, p.unitAt[0])
}

// bestFit returns the domain of level l that fits need with the least left
// over (the first in name order on ties), or -1.
func (p *plan) bestFit(l int, need int64) int32 {
	best := int32(-1)
	for d, c := range p.caps[l] {
		if c >= need && (best < 0 || c < p.caps[l][best]) {
			best = int32(d)
		}
	}
	return best
}

// fillFullest spreads need units over the domains of level l (the
// outermost slice level), those with the least capacity (that still take
// some) first; equal slice counts go by the finer units they hold.
func (p *plan) fillFullest(l int, need int64) {
	caps := p.caps[l]
	order := p.withCapacity(l, 0, int32(len(caps)))
	slices.SortStableFunc(order, func(a, b int32) int {
		if c := cmp.Compare(caps[a], caps[b]); c != 0 || p.fillFiner == nil {
			return c
		}
		return cmp.Compare(p.fillFiner[a], p.fillFiner[b])
	})
	for _, d := range order {
		if need == 0 {
			return
		}
		k := min(need, caps[d])
		p.descend(l, d, k)
		need -= k
	}
}

// descend places n units of level l in its domain d.
func (p *plan) descend(l int, d int32, n int64) {
	n *= p.unitAt[l] / p.childUnit(l)
	if l == len(p.t.levels)-1 {
		p.out = append(p.out, leafCount{leaf: d, pods: n})
		return
	}
	dom := p.t.doms[l][d]
	p.spread(l+1, dom.lo, dom.hi, n)
}

// spread places n units over domains [lo, hi) of level l using as few as it
// can: the largest first, but when one can take all that is left, the
// tightest such one.
func (p *plan) spread(l int, lo, hi int32, n int64) {
	caps := p.caps[l]
	order := p.withCapacity(l, lo, hi)
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(caps[b], caps[a]) })
	for i := 0; n > 0 && i < len(order); i++ {
		if c := caps[order[i]]; c < n {
			p.descend(l, order[i], c)
			n -= c
			continue
		}
		// order[i:] is sorted by capacity, largest first: find the smallest
		// capacity still >= n, then the first domain (in name order) with it.
		rest := order[i:]
		k := sort.Search(len(rest), func(j int) bool { return caps[rest[j]] < n }) - 1
		c := caps[rest[k]]
		j := sort.Search(k+1, func(j int) bool { return caps[rest[j]] <= c })
		p.descend(l, rest[j], n)
		return
	}
}

// withCapacity returns the domains of level l in [lo, hi) that take something, in name order.
func (p *plan) withCapacity(l int, lo, hi int32) []int32 {
	var out []int32
	for d := lo; d < hi; d++ {
		if p.caps[l][d] > 0 {
			out = append(out, d)
		}
	}
	return out
}

// encode turns the chosen lowest-level domains into an assignment, in name order.
func (p *plan) encode() *kueue.TopologyAssignment {
	slices.SortFunc(p.out, func(a, b leafCount) int { return cmp.Compare(a.leaf, b.leaf) })
	levels := p.t.assignmentLevels()
	skip := len(p.t.levels) - len(levels)
	last := len(p.t.levels) - 1
	domains := make([]Domain, 0, len(p.out))
	for _, o := range p.out {
		if o.pods > 0 {
			domains = append(domains, Domain{Values: p.t.values(last, o.leaf)[skip:], Count: int32(o.pods)})
		}
	}
	return Encode(levels, domains)
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}
