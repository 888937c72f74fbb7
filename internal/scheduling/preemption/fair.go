package preemption

import (
	"cmp"
	"slices"
	"strings"

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
// its share is below the victim side's current share.
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
			i := f.nextFair(p, remaining, s, withinNominal)
			if i < 0 {
				break
			}
			c := remaining[i]
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
	victims := f.giveBackUnneeded(p, removed, true)
	f.restore(victims)
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

type fairGroup struct {
	node  *hierarchy.Node
	share int64
	idx   []int
}

// nextFair returns the index in remaining of the next victim, or -1.
func (f *Finder) nextFair(p *Preemptor, remaining []candidate, s Strategy, withinNominal bool) int {
	byNode := map[*hierarchy.Node]*fairGroup{}
	var groups []*fairGroup
	for i, c := range remaining {
		g := byNode[c.node]
		if g == nil {
			share, _ := fairsharing.Share(c.node, nil, f.weight(c.node))
			g = &fairGroup{node: c.node, share: share}
			byNode[c.node] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, i)
	}
	slices.SortFunc(groups, func(a, b *fairGroup) int {
		if c := cmp.Compare(b.share, a.share); c != 0 {
			return c
		}
		return strings.Compare(a.node.Name(), b.node.Name())
	})
	for _, g := range groups {
		for _, i := range g.idx {
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
			if withinNominal || f.shareAllows(p, c, s) {
				return i
			}
		}
	}
	return -1
}

// shareAllows compares shares just below the lowest common ancestor of the
// preemptor and the victim.
func (f *Finder) shareAllows(p *Preemptor, c candidate, s Strategy) bool {
	lca := lowestCommonAncestor(c.node, p.Node)
	if lca == nil {
		return false
	}
	mine, theirs := lca.ChildToward(p.Node), lca.ChildToward(c.node)
	myShare, _ := fairsharing.Share(mine, p.Usage, f.weight(mine))
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

// weight returns the fair-sharing weight of a node (1 for implicit Cohorts).
func (f *Finder) weight(n *hierarchy.Node) resources.Amount {
	return fairsharing.Weight(f.snap.ClusterQueues, f.snap.Cohorts, n)
}
