package preemption

import (
	"cmp"
	"slices"

	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/fairsharing"
)

// fair chooses victims under fair sharing. The queue (or, higher up, the
// cohort) with the largest share gives up workloads first. Workloads of the
// preemptor's own queue follow withinClusterQueue. Another queue's workload
// (reclaimWithinCohort must allow it, and its side of the tree must borrow)
// is taken when the preemptor is within its nominal quota, or when the
// strategy, tried in the configured order, says the preemptor's share stays
// fair: LessThanOrEqualToFinalShare, its share with the new workload is at
// most the victim side's share without the victim; LessThanInitialShare,
// its share is below the victim side's current share. Victims that could
// come back and evict the preemptor in turn are refused (see noWayBack).
func (f *Finder) fair(p *Preemptor, cands []candidate) []Target {
	strategies := f.opts.Strategies
	if len(strategies) == 0 {
		strategies = []Strategy{LessThanOrEqualToFinalShare}
	}
	withinNominal := f.withinNominal(p)
	remaining := slices.Clone(cands)
	var removed []candidate
	fits := false
	for _, s := range strategies {
		for !fits {
			i := f.nextFair(p, remaining, s, withinNominal, ownUsage(removed))
			if i < 0 {
				break
			}
			c := remaining[i]
			c.withinNominal = !c.sameQueue && withinNominal
			c.strategy = s
			remaining = slices.Delete(remaining, i, i+1)
			f.tree.RemoveUsage(c.node, c.a.Usage)
			removed = append(removed, c)
			fits = f.fits(p, true)
		}
		if fits {
			break
		}
	}
	if !fits {
		f.restore(removed)
		return nil
	}
	// A victim is given back only if the preemptor still fits and every
	// other-queue victim kept still passes the test it was taken under.
	victims := f.giveBackUnneeded(p, removed, func(i int, needed []bool) bool {
		if !f.fits(p, true) {
			return false
		}
		victims := keptExcept(removed, needed, i)
		own := ownUsage(victims)
		for _, c := range victims {
			if !c.sameQueue && !c.withinNominal && !f.shareAllows(p, c, c.strategy, own) {
				return false
			}
		}
		return true
	})
	ok := f.noWayBack(p, victims, true)
	f.restore(victims)
	if !ok {
		return nil
	}
	return targets(victims, fairSharing)
}

// withinNominal reports whether the preemptor's queue stays within its own
// quota in every contested pair once the workload is added.
func (f *Finder) withinNominal(p *Preemptor) bool {
	for _, fr := range p.Contested {
		if resources.Add(p.Node.Usage(fr), p.Usage[fr]) > p.Node.SubtreeQuota(fr) {
			return false
		}
	}
	return true
}

// nextFair returns the index in remaining of the next victim, or -1. The
// target is found by walking down from the root towards the largest share;
// a queue none of whose candidates may be taken is set aside and the walk
// repeated.
func (f *Finder) nextFair(p *Preemptor, remaining []candidate, s Strategy, withinNominal bool, own resources.FlavorResourceQuantities) int {
	byNode := map[*hierarchy.Node][]int{}
	for i, c := range remaining {
		byNode[c.node] = append(byNode[c.node], i)
	}
	exhausted := map[*hierarchy.Node]bool{}
	for {
		live := map[*hierarchy.Node]bool{}
		for n, idx := range byNode {
			if len(idx) == 0 || exhausted[n] {
				continue
			}
			for a := n; a != nil && !live[a]; a = a.Parent() {
				live[a] = true
			}
		}
		target := f.nextTarget(p.Node.Root(), p, live)
		if target == nil {
			return -1
		}
		for _, i := range byNode[target] {
			c := remaining[i]
			if c.sameQueue {
				return i
			}
			if !c.reclaim {
				continue
			}
			if !branchBorrowing(c.node, p.Node, c.a.Usage, p.Contested) {
				break
			}
			if withinNominal || f.shareAllows(p, c, s, own) {
				return i
			}
		}
		exhausted[target] = true
	}
}

// nextTarget walks down from n to the ClusterQueue to take a victim from:
// at each Cohort, among children with candidates (live), the one with the
// largest share goes first (a Cohort before a queue on a tie, then by name);
// children that borrow nothing are passed over, unless they lead to the
// preemptor's own queue.
func (f *Finder) nextTarget(n *hierarchy.Node, p *Preemptor, live map[*hierarchy.Node]bool) *hierarchy.Node {
	if !live[n] {
		return nil
	}
	if n.Kind() == hierarchy.ClusterQueueKind {
		return n
	}
	type option struct {
		child *hierarchy.Node
		share float64
	}
	var options []option
	for _, child := range n.Children() {
		if !live[child] {
			continue
		}
		share, _ := fairsharing.Share(child, nil, f.weight(child))
		onPath := child == p.Node || child.IsAncestorOf(p.Node)
		if share == 0 && !onPath {
			continue
		}
		options = append(options, option{child: child, share: share})
	}
	slices.SortStableFunc(options, func(a, b option) int {
		if c := cmp.Compare(b.share, a.share); c != 0 {
			return c
		}
		return cmp.Compare(b.child.Kind(), a.child.Kind())
	})
	for _, o := range options {
		if t := f.nextTarget(o.child, p, live); t != nil {
			return t
		}
	}
	return nil
}

// shareAllows compares shares just below the lowest common ancestor of the
// preemptor and the victim. The preemptor's side is counted with the new
// workload and with the victims taken from its own queue (own) still there:
// a queue may not lower its share by evicting its own workloads to justify
// taking another queue's, or the two could evict each other in turn.
func (f *Finder) shareAllows(p *Preemptor, c candidate, s Strategy, own resources.FlavorResourceQuantities) bool {
	lca := lowestCommonAncestor(c.node, p.Node)
	if lca == nil {
		return false
	}
	mine, theirs := lca.ChildToward(p.Node), lca.ChildToward(c.node)
	extra := p.Usage.Clone()
	extra.Add(own)
	myShare, _ := fairsharing.Share(mine, extra, f.weight(mine))
	switch s {
	case LessThanInitialShare:
		now, _ := fairsharing.Share(theirs, nil, f.weight(theirs))
		return myShare < now
	default:
		without := resources.FlavorResourceQuantities{}
		for fr, a := range c.a.Usage {
			without[fr] = -a
		}
		after, _ := fairsharing.Share(theirs, without, f.weight(theirs))
		return myShare <= after
	}
}

// ownUsage sums the usage of the victims taken from the preemptor's queue.
func ownUsage(victims []candidate) resources.FlavorResourceQuantities {
	out := resources.FlavorResourceQuantities{}
	for _, c := range victims {
		if c.sameQueue {
			out.Add(c.a.Usage)
		}
	}
	return out
}

// weight returns the fair-sharing weight of a node (1 for implicit Cohorts).
func (f *Finder) weight(n *hierarchy.Node) resources.Amount {
	return fairsharing.Weight(f.snap.ClusterQueues, f.snap.Cohorts, n)
}
