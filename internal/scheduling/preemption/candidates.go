package preemption

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
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
	// withinNominal: taken, under fair sharing, because the preemptor stays
	// within its nominal quota (a reclamation, not a share decision).
	withinNominal bool
	// strategy is the fair-sharing strategy the victim was taken under.
	strategy Strategy
	// qi is the candidate's ClusterQueue's index in its treeCandidates.
	qi int32
}

// candidates lists, in victim order, the admitted workloads of the
// preemptor's cohort tree that use a contested (flavor, resource) and that
// some policy lets it preempt: other queues' workloads first, then the
// preemptor's own queue's.
func (f *Finder) candidates(p *Preemptor) []candidate {
	pol := p.CQ.Preemption
	var others []candidate
	if root := p.Node.Root(); root != p.Node {
		others = f.otherCandidates(p, root)
	}
	out := others
	if pol.WithinClusterQueue == kueue.PreemptionPolicyNever {
		return out
	}
	for _, c := range f.queueCandidates(p.CQ.Name) {
		if !f.taken[c.a.Key] && usesAny(c.a.Usage, p.Contested) && withinAllows(pol.WithinClusterQueue, c.a, p) {
			c.sameQueue = true
			out = append(out, c)
		}
	}
	return out
}

// otherCandidates lists, in victim order, the workloads of the other queues
// of the preemptor's tree that it may reclaim or preempt while borrowing.
func (f *Finder) otherCandidates(p *Preemptor, root *hierarchy.Node) []candidate {
	pol := p.CQ.Preemption
	tree := f.rootQueues(root)
	// Quota of a queue that does not borrow now cannot be reclaimed, and
	// removing victims only lowers usage: such queues are left out.
	borrows := f.scratch[:0]
	some := false
	for _, n := range tree.queues {
		b := n != p.Node && branchBorrowing(n, p.Node, nil, p.Contested)
		some = some || b
		borrows = append(borrows, b)
	}
	f.scratch = borrows
	if !some {
		return nil
	}
	var others []candidate
	for _, c := range f.rootCandidates(tree) {
		a := c.a
		if !borrows[c.qi] || f.taken[a.Key] || !usesAny(a.Usage, p.Contested) {
			continue
		}
		c.reclaim = reclaimAllows(pol.ReclaimWithinCohort, a, p)
		c.whileBorrowing = !f.opts.FairSharing && pol.BorrowWithinCohort == kueue.BorrowWithinCohortPolicyLowerPriority &&
			a.Priority < p.Info.Priority && (pol.MaxPriorityThreshold == nil || a.Priority <= *pol.MaxPriorityThreshold)
		if c.reclaim || c.whileBorrowing {
			others = append(others, c)
		}
	}
	return others
}

// treeCandidates is every admitted workload of one cohort tree in victim
// order (built when first needed), with the tree's ClusterQueues that have
// some (candidate.qi indexes queues).
type treeCandidates struct {
	queues []*hierarchy.Node
	names  []kueue.ClusterQueueReference
	list   []candidate
	merged bool
}

// rootQueues lists, once per cycle and tree, the ClusterQueues under root
// that have admitted workloads.
func (f *Finder) rootQueues(root *hierarchy.Node) *treeCandidates {
	if tc, ok := f.byRoot[root]; ok {
		return tc
	}
	tc := &treeCandidates{}
	for _, name := range root.ClusterQueuesBelow() {
		if list := f.queueCandidates(name); len(list) > 0 {
			tc.queues = append(tc.queues, list[0].node)
			tc.names = append(tc.names, name)
		}
	}
	f.byRoot[root] = tc
	return tc
}

// rootCandidates merges, once per cycle and tree, the admitted workloads of
// the tree's ClusterQueues in victim order, so that each preemptor filters
// one sorted list instead of sorting its own.
func (f *Finder) rootCandidates(tc *treeCandidates) []candidate {
	if tc.merged {
		return tc.list
	}
	for qi, name := range tc.names {
		for _, c := range f.queueCandidates(name) {
			c.qi = int32(qi)
			tc.list = append(tc.list, c)
		}
	}
	slices.SortFunc(tc.list, compareCandidates)
	tc.merged = true
	return tc.list
}

// queueCandidates returns a ClusterQueue's admitted workloads in victim
// order (see compareCandidates), computed once per cycle.
func (f *Finder) queueCandidates(name kueue.ClusterQueueReference) []candidate {
	if list, ok := f.byQueue[name]; ok {
		return list
	}
	node := f.tree.ClusterQueue(name)
	admitted := f.snap.AdmittedIn(name)
	list := make([]candidate, len(admitted))
	for i, a := range admitted {
		list[i] = candidate{a: a, node: node}
	}
	if cq := f.snap.ClusterQueues[name]; cq != nil && cq.FairAdmission && f.snap.FairUsage != nil {
		usage := f.snap.FairUsage
		slices.SortFunc(list, func(x, y candidate) int { return compareFairCandidates(usage, x, y) })
	} else {
		slices.SortFunc(list, compareCandidates)
	}
	f.byQueue[name] = list
	return list
}

// compareCandidates puts the least harmful victims first: workloads already
// being evicted, then lower priority, most recently admitted, and finally by
// name. (Other queues' workloads going before the preemptor's own is applied
// per preemptor.)
func compareCandidates(x, y candidate) int {
	if x.a.Evicting != y.a.Evicting {
		if x.a.Evicting {
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
	if c := strings.Compare(x.a.Key.Namespace, y.a.Key.Namespace); c != 0 {
		return c
	}
	return strings.Compare(x.a.Key.Name, y.a.Key.Name)
}

// compareFairCandidates orders the workloads of a ClusterQueue that uses
// admission fair sharing: after those being evicted, the workloads of the
// LocalQueue with the higher score (usage over weight) go first, then as
// compareCandidates.
func compareFairCandidates(usage map[types.NamespacedName]float64, x, y candidate) int {
	if x.a.Evicting != y.a.Evicting {
		return compareCandidates(x, y)
	}
	ux := usage[types.NamespacedName{Namespace: x.a.Key.Namespace, Name: string(x.a.LocalQueue)}]
	uy := usage[types.NamespacedName{Namespace: y.a.Key.Namespace, Name: string(y.a.LocalQueue)}]
	if c := cmp.Compare(uy, ux); c != 0 {
		return c
	}
	return compareCandidates(x, y)
}

// ReclaimCandidates lists, in victim order, the workloads of the other
// WithinAllows reports whether withinClusterQueue lets preemptor evict a,
// a workload of its own ClusterQueue.
func WithinAllows(policy kueue.PreemptionPolicy, a *state.Admitted, preemptor *workload.Info) bool {
	return withinAllows(policy, a, &Preemptor{Info: preemptor})
}

// Taken reports whether a workload was chosen as a victim earlier in the
// cycle.
func (f *Finder) Taken(key types.NamespacedName) bool { return f.taken[key] }

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

func usesAny(usage resources.FlavorResourceQuantities, contested []resources.FlavorResource) bool {
	for _, fr := range contested {
		if usage[fr] > 0 {
			return true
		}
	}
	return false
}

// branchBorrowing reports whether the candidate's side of the tree uses more
// than its own quota: every node from its queue up to (not including) the
// lowest ancestor it shares with the preemptor is over its subtree quota in
// a contested pair (for the queue itself, one the candidate holds, when
// usage is given). Only quota borrowed across that ancestor may be
// reclaimed; a branch within its own quota keeps what it has.
func branchBorrowing(cand, preemptor *hierarchy.Node, usage resources.FlavorResourceQuantities, contested []resources.FlavorResource) bool {
	lca := lowestCommonAncestor(cand, preemptor)
	if lca == nil {
		return false
	}
	for n := cand; n != lca; n = n.Parent() {
		over := false
		for _, fr := range contested {
			if n == cand && usage != nil && usage[fr] == 0 {
				continue
			}
			if n.Usage(fr) > n.SubtreeQuota(fr) {
				over = true
				break
			}
		}
		if !over {
			return false
		}
	}
	return true
}

func lowestCommonAncestor(a, b *hierarchy.Node) *hierarchy.Node {
	for n := a.Parent(); n != nil; n = n.Parent() {
		if n.IsAncestorOf(b) {
			return n
		}
	}
	return nil
}
