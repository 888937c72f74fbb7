package hierarchy

import (
	"github.com/kuota-dev/kuota/internal/resources"
)

// recompute derives, from scratch, which nodes are broken by a cycle, every
// subtree quota and every Cohort's usage. It runs on structural or quota
// changes only; usage changes are incremental (see AddUsage).
func (t *Tree) recompute() {
	t.markBroken()
	for _, n := range t.nodes {
		switch {
		case n == nil:
		case n.kind == CohortKind:
			n.usage = resources.FlavorResourceQuantities{}
		default:
			n.broken = n.parent != nil && n.parent.broken
		}
	}
	for _, n := range t.roots() {
		t.computeSubtree(n)
	}
}

// roots returns every node without a parent that is not part of a cycle.
func (t *Tree) roots() []*Node {
	var out []*Node
	for _, n := range t.nodes {
		if n != nil && n.parent == nil {
			out = append(out, n)
		}
	}
	return out
}

// markBroken flags every Cohort whose chain of parents loops.
func (t *Tree) markBroken() {
	state := make(map[*Node]uint8, len(t.index.cohorts)) // 0 unseen, 1 on path, 2 done
	var visit func(n *Node) bool
	visit = func(n *Node) bool {
		switch state[n] {
		case 1:
			return true // back on the current path: a cycle
		case 2:
			return n.broken
		}
		state[n] = 1
		broken := n.parent != nil && visit(n.parent)
		state[n] = 2
		n.broken = broken
		return broken
	}
	for _, n := range t.nodes {
		if n != nil && n.kind == CohortKind {
			visit(n)
		}
	}
}

// computeSubtree fills Q for n's subtree and U for its Cohorts, post-order.
// Q is capped at resources.MaxAmount: quota beyond what one amount holds
// cannot be counted, so it is not lent.
func (t *Tree) computeSubtree(n *Node) {
	sub := resources.FlavorResourceQuantities{}
	for fr, q := range n.quotas {
		sub[fr] = min(q.Nominal, resources.MaxAmount)
	}
	n.height = 0
	if n.kind == CohortKind {
		n.height = 1
		n.usage, n.excess = resources.FlavorResourceQuantities{}, nil
		for c := range n.children {
			t.computeSubtree(c)
			n.height = max(n.height, c.height+1)
			for fr, q := range c.subtree {
				sub[fr] = min(resources.Add(sub[fr], resources.Sub(q, c.guaranteed(fr))), resources.MaxAmount)
			}
			for fr, u := range c.usage {
				if over := c.overflow(fr, u); over != 0 {
					n.shiftUsage(fr, over)
				}
			}
		}
	}
	n.subtree = sub
}

// guaranteed is G(n): the part of n's subtree quota it does not lend to
// its parent. Only meaningful for nodes with a parent.
func (n *Node) guaranteed(fr FlavorResource) Amount {
	q, ok := n.quotas[fr]
	if !ok || q.LendingLimit == resources.Unlimited {
		return 0
	}
	return max(0, resources.Sub(n.subtree[fr], q.LendingLimit))
}

// overflow is the part of usage u that n draws from its parent.
func (n *Node) overflow(fr FlavorResource, u Amount) Amount {
	return max(0, resources.Sub(u, n.guaranteed(fr)))
}

// AddUsage adds a workload's usage to a ClusterQueue and rolls it up.
func (t *Tree) AddUsage(n *Node, usage resources.FlavorResourceQuantities) {
	if n = t.writable(n); n == nil {
		return
	}
	for fr, a := range usage {
		t.addUsage(n, fr, a)
	}
}

// RemoveUsage removes a workload's usage from a ClusterQueue and rolls it up.
func (t *Tree) RemoveUsage(n *Node, usage resources.FlavorResourceQuantities) {
	if n = t.writable(n); n == nil {
		return
	}
	for fr, a := range usage {
		t.addUsage(n, fr, -a)
	}
}

func (t *Tree) addUsage(n *Node, fr FlavorResource, delta Amount) {
	for n != nil && delta != 0 {
		old, updated := n.shiftUsage(fr, delta)
		if n.parent == nil || n.broken {
			return
		}
		delta = n.overflow(fr, updated) - n.overflow(fr, old)
		n = n.parent
	}
}
