package preemption

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// OtherQueueCandidates lists, in victim order, the workloads of the other
// ClusterQueues of the preemptor's cohort tree that it may take to make
// room on the nodes (topology preemption: the preemptor already fits the
// quota), each with the reason it would be taken under. The rules are
// those of quota preemption:
//
//   - InCohortReclamation: reclaimWithinCohort allows the workload, its
//     queue's branch borrows, and the preemptor stays within its own quota
//     with its workload;
//   - InCohortReclaimWhileBorrowing (classic preemption, when the preemptor
//     borrows): borrowWithinCohort allows it (lower priority, within
//     maxPriorityThreshold), and it ran wholly on borrowed quota up to the
//     common ancestor, counting the candidates before it as gone;
//   - InCohortFairSharing (fair sharing, when the preemptor borrows):
//     reclaimWithinCohort allows it and one of the strategies says the
//     preemptor's share stays fair, the candidates before it counted as
//     gone.
//
// Candidates are checked in order with those before them removed, so any
// subset of a prefix of the list stays allowed: removing fewer leaves
// queues borrowing more and shares higher. Whether the chosen victims
// could come back and evict the preemptor is checked by NoWayBack. p.Node
// must be the Finder's tree's node.
func (f *Finder) OtherQueueCandidates(p *Preemptor) []Target {
	root := p.Node.Root()
	if root == p.Node {
		return nil
	}
	within := f.withinNominal(p)
	strategies := f.opts.Strategies
	if len(strategies) == 0 {
		strategies = []Strategy{LessThanOrEqualToFinalShare}
	}
	var out []Target
	var removed []candidate
	defer func() { f.restore(removed) }()
	for _, c := range f.otherCandidates(p, root) {
		if c.a.Evicting {
			continue
		}
		var reason string
		switch {
		case within && c.reclaim:
			reason = kueue.InCohortReclamationReason
		case within:
			continue
		case f.opts.FairSharing && c.reclaim && f.anyShareAllows(p, c, strategies):
			reason = kueue.InCohortFairSharingReason
		case !f.opts.FairSharing && c.whileBorrowing && f.eligibleNow(p, c, whileBorrowing):
			reason = kueue.InCohortReclaimWhileBorrowingReason
		default:
			continue
		}
		f.tree.RemoveUsage(c.node, c.a.Usage)
		removed = append(removed, c)
		out = append(out, Target{Workload: c.a, Reason: reason})
	}
	return out
}

// anyShareAllows reports whether one of the strategies lets the preemptor
// take the candidate, its side of the tree still borrowing.
func (f *Finder) anyShareAllows(p *Preemptor, c candidate, strategies []Strategy) bool {
	if !branchBorrowing(c.node, p.Node, c.a.Usage, p.Contested) {
		return false
	}
	for _, s := range strategies {
		if f.shareAllows(p, c, s, nil) {
			return true
		}
	}
	return false
}

// NoWayBack reports whether, with the targets gone, none of those of
// other ClusterQueues could come back and evict the preemptor in turn
// (see noWayBack); under fair sharing their side's share is compared too.
// The tree is left as it was.
func (f *Finder) NoWayBack(p *Preemptor, targets []Target) bool {
	var victims []candidate
	for _, t := range targets {
		n := f.tree.ClusterQueue(t.Workload.ClusterQueue)
		if n == nil {
			continue
		}
		c := candidate{a: t.Workload, node: n, sameQueue: t.Workload.ClusterQueue == p.CQ.Name}
		f.tree.RemoveUsage(n, c.a.Usage)
		victims = append(victims, c)
	}
	ok := f.noWayBack(p, victims, f.opts.FairSharing)
	f.restore(victims)
	return ok
}
