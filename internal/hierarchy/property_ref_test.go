package hierarchy

import (
	"maps"
	"slices"

	"github.com/kuota-dev/kuota/internal/resources"
)

// This file holds an independent reference model of the cohort tree used by
// property_test.go. It is written from the definitions in the package
// comment (Q, G, U) and Kueue's quota rules, not from the package code:
// everything is recomputed from the specs and per-ClusterQueue usage on
// every call, nodes are indexed in plain slices, and Available is obtained
// two ways: a direct recursive definition, and by brute force (the largest
// amount that can be added without breaking any limit).

// refNode is a node of the reference tree.
type refNode struct {
	idx      int
	name     string
	isCQ     bool
	parent   *refNode
	children []*refNode
	quotas   Quotas
	broken   bool
}

// refTree is the reference tree built from a propSpec.
type refTree struct {
	cohorts map[string]*refNode
	cqs     map[string]*refNode
	all     []*refNode
	// order lists the nodes not under a cycle, children before parents.
	order []*refNode
	usage []resources.FlavorResourceQuantities // by idx, ClusterQueues only
	// perFR caches, per (flavor, resource), the quotas and usage by idx.
	perFR map[FlavorResource]*refFR
}

// refFR holds one (flavor, resource)'s nominal quota, limits (-1 when
// unset) and ClusterQueue usage, by node idx.
type refFR struct {
	nominal, borrowing, lending, usage, zero []Amount
}

// refVals holds Q, G and U of one (flavor, resource) for every node not
// under a cycle, indexed by refNode.idx.
type refVals struct {
	q, g, u []Amount
}

func buildRef(s *propSpec) *refTree {
	r := &refTree{cohorts: map[string]*refNode{}, cqs: map[string]*refNode{}, perFR: map[FlavorResource]*refFR{}}
	cohort := func(name string) *refNode {
		if n := r.cohorts[name]; n != nil {
			return n
		}
		n := &refNode{idx: len(r.all), name: name, quotas: Quotas{}}
		r.all = append(r.all, n)
		r.usage = append(r.usage, nil)
		r.cohorts[name] = n
		return n
	}
	for _, name := range slices.Sorted(maps.Keys(s.cohorts)) {
		cohort(name).quotas = s.cohorts[name].quotas
	}
	for _, name := range slices.Sorted(maps.Keys(s.cohorts)) {
		if p := s.cohorts[name].parent; p != "" {
			c := r.cohorts[name]
			c.parent = cohort(p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.cqs)) {
		spec := s.cqs[name]
		n := &refNode{idx: len(r.all), name: name, isCQ: true, quotas: spec.quotas}
		r.all = append(r.all, n)
		r.usage = append(r.usage, spec.usage)
		r.cqs[name] = n
		if spec.cohort != "" {
			n.parent = cohort(spec.cohort)
		}
	}
	for _, n := range r.all {
		if n.parent != nil {
			n.parent.children = append(n.parent.children, n)
		}
	}
	// A node is broken when walking up its parents comes back to a node
	// already seen on the walk.
	for _, n := range r.all {
		seen := map[*refNode]bool{}
		for cur := n; cur != nil; cur = cur.parent {
			if seen[cur] {
				n.broken = true
				break
			}
			seen[cur] = true
		}
	}
	var post func(n *refNode)
	post = func(n *refNode) {
		for _, c := range n.children {
			post(c)
		}
		r.order = append(r.order, n)
	}
	for _, n := range r.all {
		if n.parent == nil {
			post(n)
		}
	}
	return r
}

func (n *refNode) nominal(fr FlavorResource) Amount {
	if q, ok := n.quotas[fr]; ok {
		return q.Nominal
	}
	return 0
}

func (n *refNode) borrowingLimit(fr FlavorResource) (Amount, bool) {
	q, ok := n.quotas[fr]
	if !ok || q.BorrowingLimit == resources.Unlimited {
		return 0, false
	}
	return q.BorrowingLimit, true
}

func (n *refNode) lendingLimit(fr FlavorResource) (Amount, bool) {
	q, ok := n.quotas[fr]
	if !ok || q.LendingLimit == resources.Unlimited {
		return 0, false
	}
	return q.LendingLimit, true
}

// inSubtree reports whether n is root or one of its descendants.
func (n *refNode) inSubtree(root *refNode) bool {
	seen := map[*refNode]bool{}
	for cur := n; cur != nil && !seen[cur]; cur = cur.parent {
		if cur == root {
			return true
		}
		seen[cur] = true
	}
	return false
}

func (r *refTree) fr(fr FlavorResource) *refFR {
	if d := r.perFR[fr]; d != nil {
		return d
	}
	n := len(r.all)
	d := &refFR{nominal: make([]Amount, n), borrowing: make([]Amount, n), lending: make([]Amount, n),
		usage: make([]Amount, n), zero: make([]Amount, n)}
	for i, node := range r.all {
		d.nominal[i] = node.nominal(fr)
		d.borrowing[i], d.lending[i] = -1, -1
		if bl, ok := node.borrowingLimit(fr); ok {
			d.borrowing[i] = bl
		}
		if ll, ok := node.lendingLimit(fr); ok {
			d.lending[i] = ll
		}
		if node.isCQ {
			d.usage[i] = r.usage[i][fr]
		}
	}
	r.perFR[fr] = d
	return d
}

// values computes Q, G and U of fr from scratch. extra, when not nil, adds
// an amount to one ClusterQueue's usage.
func (r *refTree) values(fr FlavorResource, extraAt *refNode, extra Amount) refVals {
	return r.valuesOf(r.fr(fr), r.fr(fr).usage, extraAt, extra, nil)
}

// valuesOf computes Q, G and U from the given ClusterQueue usage, into buf
// when not nil.
func (r *refTree) valuesOf(d *refFR, usage []Amount, extraAt *refNode, extra Amount, buf *refVals) refVals {
	var v refVals
	if buf != nil {
		v = *buf
	} else {
		v = refVals{q: make([]Amount, len(r.all)), g: make([]Amount, len(r.all)), u: make([]Amount, len(r.all))}
	}
	for _, n := range r.order {
		i := n.idx
		q := d.nominal[i]
		var u Amount
		if n.isCQ {
			u = usage[i]
			if n == extraAt {
				u += extra
			}
		} else {
			for _, c := range n.children {
				q += v.q[c.idx] - v.g[c.idx]
				u += max(0, v.u[c.idx]-v.g[c.idx])
			}
		}
		v.q[i], v.u[i], v.g[i] = q, u, 0
		if ll := d.lending[i]; ll >= 0 {
			v.g[i] = max(0, q-ll)
		}
	}
	return v
}

// excess says by how much n breaks its own limit: at a root, usage beyond
// subtree quota; elsewhere, with a borrowing limit, what n draws from its
// parent, max(0, U-G), beyond what it lends there plus the limit, Q-G+BL.
func (v refVals) excess(n *refNode, fr FlavorResource) Amount {
	i := n.idx
	if n.parent == nil {
		return max(0, v.u[i]-v.q[i])
	}
	if bl, ok := n.borrowingLimit(fr); ok {
		return max(0, max(0, v.u[i]-v.g[i])-(v.q[i]-v.g[i]+bl))
	}
	return 0
}

// excessOf is excess with the limits taken from d.
func (v refVals) excessOf(d *refFR, n *refNode) Amount {
	i := n.idx
	if n.parent == nil {
		return max(0, v.u[i]-v.q[i])
	}
	if bl := d.borrowing[i]; bl >= 0 {
		return max(0, max(0, v.u[i]-v.g[i])-(v.q[i]-v.g[i]+bl))
	}
	return 0
}

// available is the direct recursive definition: the unused guaranteed
// quota plus what the parent can give (never negative), capped by the
// borrowing limit; Q-U at a root; 0 under a cycle.
func (v refVals) available(n *refNode, fr FlavorResource) Amount {
	if n.broken {
		return 0
	}
	i := n.idx
	if n.parent == nil {
		return v.q[i] - v.u[i]
	}
	local := max(0, v.g[i]-v.u[i])
	give := v.available(n.parent, fr)
	if bl, ok := n.borrowingLimit(fr); ok {
		give = min(give, v.q[i]-v.g[i]-max(0, v.u[i]-v.g[i])+bl)
	}
	return local + max(0, give)
}

// bruteAvailable finds, by binary search, the largest amount x that can be
// added to ClusterQueue cq such that no node whose usage changes ends up
// beyond its limit (see excess). It uses only from-scratch recomputation.
// noUsage computes it as if nothing in the tree were used (the potential).
func (r *refTree) bruteAvailable(cq *refNode, fr FlavorResource, noUsage bool) Amount {
	if cq.broken {
		return 0
	}
	d := r.fr(fr)
	usage := d.usage
	if noUsage {
		usage = d.zero
	}
	base := r.valuesOf(d, usage, nil, 0, nil)
	buf := r.valuesOf(d, usage, nil, 0, nil)
	feasible := func(x Amount) bool {
		v := r.valuesOf(d, usage, cq, x, &buf)
		for _, n := range r.order {
			if v.u[n.idx] != base.u[n.idx] && v.excessOf(d, n) > 0 {
				return false
			}
		}
		return true
	}
	var total Amount
	for _, n := range d.nominal {
		total += n
	}
	// Beyond 2*total+1 the root's usage must exceed its quota.
	lo, hi := Amount(0), 2*total+1
	if feasible(hi) {
		return -1 // cannot happen; reported by the caller
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if feasible(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// borrowingLevel is the reference for Node.BorrowingLevel: after adding
// amount to n, the height of the first node on the way up whose usage is
// within its subtree quota (a ClusterQueue has height 0, a Cohort 1 + the
// largest height of its children); false, with the root's height, when
// there is none.
func (r *refTree) borrowingLevel(n *refNode, fr FlavorResource, amount Amount) (int, bool) {
	v := r.values(fr, n, amount)
	cur := n
	for ; ; cur = cur.parent {
		if v.u[cur.idx] <= v.q[cur.idx] {
			return cur.height(), true
		}
		if cur.parent == nil {
			return cur.height(), false
		}
	}
}

// height is 0 for a ClusterQueue and 1 + the largest child height for a
// Cohort (1 without children). Only for nodes not under a cycle.
func (n *refNode) height() int {
	if n.isCQ {
		return 0
	}
	h := 1
	for _, c := range n.children {
		h = max(h, c.height()+1)
	}
	return h
}

// lendingCheck derives, from the model, what "siblings never use more of
// n's quota than its lending limit" means for a node n with a lending
// limit. Quota is pooled, so the check is on totals. Let a be the first
// ancestor of n that is a root or has a borrowing limit, and B what a may
// take from above it (0 at a root, its borrowing limit otherwise). Every
// ClusterQueue under a but outside n's subtree can only be served by the
// nominal quota of the nodes under a outside n's subtree, by what n lends,
// lent(n) = Q(n)-G(n) = min(Q(n), lendingLimit(n)), and by B. So, whenever
// a respects its own limit:
//
//	sum(U(cq), cq under a, not under n) <= sum(nominal(m), m under a, not under n) + lent(n) + B
//
// (Proof: for every node m, the ClusterQueue usage under m equals
// nominal(under m) - Q(m) + U(m) - slack(m), where slack(m) >= 0 sums the
// unused guaranteed quota max(0, G-U) of every node strictly under m; and
// slack(a) >= max(0, G(n)-U(n)) + slack(n).) It returns a description of
// the first violation, or "", and how many nodes it checked.
func (r *refTree) lendingCheck(fr FlavorResource, v refVals) (string, bool, int) {
	checked := 0
	for _, n := range r.order {
		ll, ok := n.lendingLimit(fr)
		if !ok || n.parent == nil {
			continue
		}
		a := n.parent
		for a.parent != nil {
			if _, ok := a.borrowingLimit(fr); ok {
				break
			}
			a = a.parent
		}
		var b Amount
		if a.parent != nil {
			b, _ = a.borrowingLimit(fr)
		}
		if v.excess(a, fr) > 0 {
			continue // a's own limit is broken by a quota change; nothing to derive
		}
		checked++
		var used, nominal Amount
		for _, m := range r.order {
			if !m.inSubtree(a) || m.inSubtree(n) {
				continue
			}
			nominal += m.nominal(fr)
			if m.isCQ {
				used += r.usage[m.idx][fr]
			}
		}
		lent := min(v.q[n.idx], ll)
		if used > nominal+lent+b {
			return describeLending(n, a, fr, used, nominal, lent, b), false, checked
		}
	}
	return "", true, checked
}
