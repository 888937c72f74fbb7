package preemption

import (
	"cmp"
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// candidate is an admitted workload the policies may let the preemptor evict.
type candidate struct {
	a    *state.Admitted
	node *hierarchy.Node
	// sameQueue: in the preemptor's ClusterQueue (withinClusterQueue).
	sameQueue bool
	// reclaim: another queue's workload reclaimWithinCohort allows.
	reclaim bool
	// whileBorrowing: another queue's workload borrowWithinCohort allows.
	whileBorrowing bool
}

// candidates lists, in victim order, the admitted workloads of the
// preemptor's cohort tree that use a contested (flavor, resource) and that
// some policy lets it preempt.
func (f *Finder) candidates(p *Preemptor) []candidate {
	contested := make(map[resources.FlavorResource]bool, len(p.Contested))
	for _, fr := range p.Contested {
		contested[fr] = true
	}
	pol := p.CQ.Preemption
	var out []candidate
	for _, name := range f.queuesUnder(p.Node.Root()) {
		node := f.tree.ClusterQueue(name)
		for _, a := range f.snap.AdmittedIn(name) {
			if f.taken[a.Key] || !usesAny(a.Usage, contested) {
				continue
			}
			c := candidate{a: a, node: node, sameQueue: name == p.CQ.Name}
			if c.sameQueue {
				if withinAllows(pol.WithinClusterQueue, a, p) {
					out = append(out, c)
				}
				continue
			}
			c.reclaim = reclaimAllows(pol.ReclaimWithinCohort, a, p)
			c.whileBorrowing = !f.opts.FairSharing && pol.BorrowWithinCohort == kueue.BorrowWithinCohortPolicyLowerPriority &&
				a.Priority < p.Info.Priority && (pol.MaxPriorityThreshold == nil || a.Priority <= *pol.MaxPriorityThreshold)
			if c.reclaim || c.whileBorrowing {
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, compareCandidates)
	return out
}

// compareCandidates puts the least harmful victims first: workloads already
// being evicted, then other queues' before the preemptor's own, lower
// priority, most recently admitted, and finally by name.
func compareCandidates(x, y candidate) int {
	if x.a.Evicting != y.a.Evicting {
		if x.a.Evicting {
			return -1
		}
		return 1
	}
	if x.sameQueue != y.sameQueue {
		if !x.sameQueue {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(x.a.Priority, y.a.Priority); c != 0 {
		return c
	}
	if c := cmp.Compare(y.a.ReservedAt, x.a.ReservedAt); c != 0 {
		return c
	}
	return strings.Compare(x.a.Key.String(), y.a.Key.String())
}

// withinAllows applies withinClusterQueue.
func withinAllows(policy kueue.PreemptionPolicy, a *state.Admitted, p *Preemptor) bool {
	switch policy {
	case kueue.PreemptionPolicyLowerPriority:
		return a.Priority < p.Info.Priority
	case kueue.PreemptionPolicyLowerOrNewerEqualPriority:
		return a.Priority < p.Info.Priority || (a.Priority == p.Info.Priority && a.QueueOrderTime > p.Info.QueueOrderTime)
	}
	return false
}

// reclaimAllows applies reclaimWithinCohort.
func reclaimAllows(policy kueue.PreemptionPolicy, a *state.Admitted, p *Preemptor) bool {
	switch policy {
	case kueue.PreemptionPolicyAny:
		return true
	case kueue.PreemptionPolicyLowerPriority:
		return a.Priority < p.Info.Priority
	}
	return false
}

func usesAny(usage resources.FlavorResourceQuantities, contested map[resources.FlavorResource]bool) bool {
	for fr, a := range usage {
		if a > 0 && contested[fr] {
			return true
		}
	}
	return false
}

// queuesUnder returns the ClusterQueues of the tree under root, sorted.
func (f *Finder) queuesUnder(root *hierarchy.Node) []kueue.ClusterQueueReference {
	if f.queuesByRoot == nil {
		f.queuesByRoot = map[*hierarchy.Node][]kueue.ClusterQueueReference{}
		for _, name := range f.tree.ClusterQueueNames() {
			if n := f.tree.ClusterQueue(name); n != nil && n.Active() {
				r := n.Root()
				f.queuesByRoot[r] = append(f.queuesByRoot[r], name)
			}
		}
	}
	return f.queuesByRoot[root]
}

// branchBorrowing reports whether the candidate's side of the tree uses more
// than its own quota of a contested pair it holds: some node from its queue
// up to (not including) the lowest ancestor it shares with the preemptor
// is over its subtree quota. Only such quota may be reclaimed.
func branchBorrowing(cand, preemptor *hierarchy.Node, usage resources.FlavorResourceQuantities, contested []resources.FlavorResource) bool {
	lca := lowestCommonAncestor(cand, preemptor)
	for n := cand; n != nil && n != lca; n = n.Parent() {
		for _, fr := range contested {
			if usage[fr] > 0 && n.Usage(fr) > n.SubtreeQuota(fr) {
				return true
			}
		}
	}
	return false
}

func lowestCommonAncestor(a, b *hierarchy.Node) *hierarchy.Node {
	for n := a.Parent(); n != nil; n = n.Parent() {
		if n.IsAncestorOf(b) {
			return n
		}
	}
	return nil
}
