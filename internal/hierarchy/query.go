package hierarchy

import (
	"slices"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Active reports whether quota can be assigned through n: false when n or
// one of its ancestors is part of a cycle of Cohort parents.
func (n *Node) Active() bool { return !n.broken }

// Quota returns n's own quota for fr and whether it has one.
func (n *Node) Quota(fr FlavorResource) (Quota, bool) {
	q, ok := n.quotas[fr]
	return q, ok
}

// Usage is U(n) for fr.
func (n *Node) Usage(fr FlavorResource) Amount { return n.usage[fr] }

// SubtreeQuota is Q(n) for fr: for a ClusterQueue, its nominal quota.
func (n *Node) SubtreeQuota(fr FlavorResource) Amount { return n.subtree[fr] }

// UsageAll returns a copy of n's usage.
func (n *Node) UsageAll() resources.FlavorResourceQuantities { return n.usage.Clone() }

// Borrowed is how much of fr n uses beyond its subtree quota.
func (n *Node) Borrowed(fr FlavorResource) Amount {
	return max(0, resources.Sub(n.usage[fr], n.subtree[fr]))
}

// Available is how much more of fr the node can obtain now: what remains of
// its guaranteed quota plus what its parent can give, bounded by its
// borrowing limit, recursively up to the root. A node without a parent can
// use its subtree quota only. The result can be negative after quotas
// shrink, and is at most resources.MaxAmount, so that a request clamped at
// resources.Max never fits.
func (n *Node) Available(fr FlavorResource) Amount {
	return min(n.available(fr), resources.MaxAmount)
}

func (n *Node) available(fr FlavorResource) Amount {
	if n.broken {
		return 0
	}
	if n.parent == nil {
		return resources.Sub(n.subtree[fr], n.usage[fr])
	}
	g := n.guaranteed(fr)
	u := n.usage[fr]
	local := max(0, resources.Sub(g, u))
	fromParent := n.parent.available(fr)
	if q, ok := n.quotas[fr]; ok && q.BorrowingLimit != resources.Unlimited {
		lent := resources.Sub(n.subtree[fr], g)
		usedAbove := max(0, resources.Sub(u, g))
		fromParent = min(fromParent, resources.Add(resources.Sub(lent, usedAbove), q.BorrowingLimit))
	}
	return resources.Add(local, max(0, fromParent))
}

// PotentialAvailable is what the node could obtain of fr if nothing in the
// tree were used: the ceiling that a single workload can never exceed. It
// is at most resources.MaxAmount, as Available is.
func (n *Node) PotentialAvailable(fr FlavorResource) Amount {
	return min(n.potential(fr), resources.MaxAmount)
}

func (n *Node) potential(fr FlavorResource) Amount {
	if n.broken {
		return 0
	}
	if n.parent == nil {
		return n.subtree[fr]
	}
	g := n.guaranteed(fr)
	fromParent := n.parent.potential(fr)
	if q, ok := n.quotas[fr]; ok && q.BorrowingLimit != resources.Unlimited {
		lent := resources.Sub(n.subtree[fr], g)
		fromParent = min(fromParent, resources.Add(lent, q.BorrowingLimit))
	}
	return resources.Add(g, max(0, fromParent))
}

// BorrowingLevel says where quota for `amount` more of fr would come from:
// the height of the lowest subtree (the ClusterQueue itself, then its
// ancestors) whose quota covers the usage with the amount added. 0 means no
// borrowing; a Cohort's height is 1 + the largest height of its children, so
// the level names the pool, whichever ClusterQueue borrows from it. The
// second result is false when even the root's subtree quota is exceeded.
func (n *Node) BorrowingLevel(fr FlavorResource, amount Amount) (int, bool) {
	fitting := n.LowestFitting(fr, amount)
	if fitting == nil {
		return n.Root().height, false
	}
	return fitting.height, true
}

// FitsBelowRoot reports whether `amount` more of fr fits in a subtree below
// the root: quota that someone under the root is using could be reclaimed.
func (n *Node) FitsBelowRoot(fr FlavorResource, amount Amount) bool {
	fitting := n.LowestFitting(fr, amount)
	return fitting != nil && fitting.parent != nil && !fitting.parent.broken
}

// LowestFitting walks up from n adding amount (and what it draws from each
// parent) and returns the first node whose subtree quota covers its usage.
func (n *Node) LowestFitting(fr FlavorResource, amount Amount) *Node {
	delta := amount
	for node := n; node != nil; node = node.parent {
		old := node.usage[fr]
		updated := resources.Add(old, delta)
		if updated <= node.subtree[fr] {
			return node
		}
		if node.parent == nil || node.broken {
			return nil
		}
		delta = node.overflow(fr, updated) - node.overflow(fr, old)
	}
	return nil
}

// Height is 0 for a ClusterQueue and 1 + the largest child height for a Cohort.
func (n *Node) Height() int { return n.height }

// Depth is the number of ancestors of n.
func (n *Node) Depth() int {
	d := 0
	for p := n.parent; p != nil && !p.broken; p = p.parent {
		d++
	}
	return d
}

// Root returns the top of n's tree (n itself without a parent).
func (n *Node) Root() *Node {
	r := n
	for r.parent != nil && !r.parent.broken {
		r = r.parent
	}
	return r
}

// FlavorResources returns the (flavor, resource) pairs n has quota or usage
// for, in a stable order.
func (n *Node) FlavorResources() []FlavorResource {
	keys := make(map[FlavorResource]struct{}, len(n.subtree)+len(n.usage))
	for fr := range n.subtree {
		keys[fr] = struct{}{}
	}
	for fr := range n.usage {
		keys[fr] = struct{}{}
	}
	out := make([]FlavorResource, 0, len(keys))
	for fr := range keys {
		out = append(out, fr)
	}
	slices.SortFunc(out, resources.CompareFlavorResource)
	return out
}

// IsAncestorOf reports whether n is a (strict) ancestor of other.
func (n *Node) IsAncestorOf(other *Node) bool {
	for p := other.parent; p != nil; p = p.parent {
		if p == n {
			return true
		}
		if p.broken {
			return false
		}
	}
	return false
}

// ChildToward returns the child of n on the path down to descendant, or nil
// when n is not an ancestor of it.
func (n *Node) ChildToward(descendant *Node) *Node {
	for c := descendant; c != nil; c = c.parent {
		if c.parent == n {
			return c
		}
		if c.broken {
			return nil
		}
	}
	return nil
}

// ClusterQueuesBelow returns the names of the ClusterQueues in n's subtree
// (n itself for a ClusterQueue), sorted. Under a cycle of Cohort parents
// nothing is below a Cohort: its queues have no tree to share.
func (n *Node) ClusterQueuesBelow() []kueue.ClusterQueueReference {
	var out []kueue.ClusterQueueReference
	var walk func(*Node)
	walk = func(m *Node) {
		if m.kind == ClusterQueueKind {
			out = append(out, kueue.ClusterQueueReference(m.name))
			return
		}
		if m.broken {
			return
		}
		for c := range m.children {
			walk(c)
		}
	}
	walk(n)
	slices.Sort(out)
	return out
}
