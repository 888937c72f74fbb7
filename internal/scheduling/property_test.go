package scheduling

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Property tests of Decide on random clusters (property_gen_test.go): 1-3
// flavors with random node labels and taints, 1-3 levels of Cohorts with
// random quotas and limits (sometimes a cycle), ClusterQueues with random
// strategy, flavor fungibility, preemption policies, limits and resource
// groups, running workloads admitted within what their queue could obtain,
// and pending workloads with 1-3 PodSets, random counts, minCount, requests,
// node selectors, affinity and tolerations. For every trace:
//
//  1. every pending workload gets exactly one decision, or a place in one
//     Blocked summary; Result.Admitted counts the admissions; a refusal has
//     a reason;
//  2. Decide does not modify the snapshot, and is deterministic: the same
//     input, and the same queues in another order, give the same decisions;
//  3. an admitted decision is well formed: its queue exists and is active;
//     every requested resource covered by the queue has a flavor from the
//     covering group, the same for all resources of a group, that exists
//     and that the PodSet may use (independent eligibility check); no
//     uncovered resource is requested (BlockUndeclared); counts are full
//     except for the one partial PodSet, within [minCount, count); its
//     usage equals the PodSets' requests on the assigned flavors;
//  4. replaying the admissions in decision order on a clone of the
//     snapshot's tree, each one's usage is within Available at that point,
//     and recomputing the assignment at that point gives the same one
//     (nothing was admitted on a stale evaluation); afterwards every node
//     is within its limits (root U <= Q; with a borrowing limit,
//     max(0, U-G) <= Q-G+BL);
//  5. StrictFIFO: after the first workload of a queue refused by flavor
//     assignment, nothing behind it in that queue is admitted, and each is
//     in the queue's Blocked summary (or refused by a precheck);
//  6. BestEffortFIFO: a single-PodSet workload refused by flavor assignment
//     still does not fit the final tree (usage only grows within a cycle);
//     and no admitted single-PodSet workload dominates an earlier refused
//     single-PodSet workload of the same queue with the same placement
//     constraints (per resource, minimum admissible requests at least as
//     large). Multi-PodSet workloads are left out: greedy flavor assignment
//     is not monotone across PodSets (a larger first PodSet may move to
//     another flavor and leave room for the second), in Kueue too;
//  7. a workload that clearly fits alone in an empty tree (the only pending
//     workload, no admitted ones, every eligible flavor of every group it
//     needs can hold the whole workload's requests) is admitted.
//
// Also, at each admission: the borrowing level is 0 exactly when the usage
// stays within the queue's own quota, and a partially admitted
// single-PodSet workload would not fit with one pod more.
//
// On failure the seed, the cluster and the decisions are printed; rerun
// one trace with -run 'TestDecideProperties/seed=N'. The generator's
// coverage is logged (-v) and checked, so that no property goes unexercised.

const propDecideTraces = 1000

func TestDecideProperties(t *testing.T) {
	stats := &propStats{reasons: map[Reason]int{}}
	for seed := uint64(1); seed <= propDecideTraces; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			c := newPropCluster(seed)
			p := &propRun{t: t, c: c, stats: stats}
			p.run()
		})
	}
	t.Logf("coverage: %+v", *stats)
	// Every property must actually be exercised by the generator.
	if !t.Failed() && (stats.fitsAlone < propDecideTraces/2 || stats.partial < 20 || stats.borrowing < 100 ||
		stats.strictBlocked < 50 || stats.dominance < 20 || stats.reasons[WaitingForQuota] < 200) {
		t.Errorf("the generator no longer exercises every property: %+v", *stats)
	}
}

// propStats counts what the traces exercised.
type propStats struct {
	admitted, partial, borrowing, strictBlocked, dominance, fitsAlone int
	reasons                                                           map[Reason]int
}

type propRun struct {
	t      *testing.T
	c      *propCluster
	snap   *state.Snapshot
	queues []workload.Queue
	result Result
	byKey  map[types.NamespacedName]*Decision
	stats  *propStats
}

func (p *propRun) fail(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("seed %d: %s\n--- cluster ---\n%s--- decisions ---\n%s", p.c.seed, fmt.Sprintf(format, args...),
		p.c.describe(), describe(p.result))
}

func (p *propRun) run() {
	c := p.c
	p.snap = c.build(true).Snapshot()
	p.queues = propQueues(slices.Clone(c.pending))
	before := propTreeDump(p.snap.Tree)
	admittedBefore := p.snap.AdmittedCount()
	p.result = Decide(p.snap, p.queues, c.opts)
	if after := propTreeDump(p.snap.Tree); after != before || p.snap.AdmittedCount() != admittedBefore {
		p.fail("Decide modified the snapshot:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The second run writes into the memory of another run's decisions,
	// not cleared, as the manager's loop reuses it.
	used := Decide(p.snap, p.queues, c.opts).Decisions
	again := DecideInto(used, p.snap, p.queues, c.opts)
	if got, want := describe(again), describe(p.result); got != want || again.Admitted != p.result.Admitted {
		p.fail("a second run decided differently:\n%s", got)
	}
	if len(used) > 0 && &again.Decisions[:1][0] != &used[0] {
		p.fail("DecideInto did not reuse the memory it was given")
	}
	n := len(again.Decisions)
	if released := again.Release(); len(released) != 0 || slices.ContainsFunc(released[:n], func(d Decision) bool { return d.Workload != nil }) {
		p.fail("Release handed back memory still holding decisions")
	}
	if got, want := describe(Decide(p.snap, withNamespaces(p.queues), c.opts)), describe(p.result); got != want {
		p.fail("the same queues with their namespaces listed decided differently:\n%s", got)
	}
	shuffled := slices.Clone(p.queues)
	c.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if got, want := describe(Decide(p.snap, shuffled, c.opts)), describe(p.result); got != want {
		p.fail("the same queues in another order decided differently:\n%s", got)
	}
	p.checkOneEach()
	final := p.checkAdmissions()
	propCheckLimits(p, p.realUsage(false))
	propCheckLimits(p, p.realUsage(true))
	p.checkStrictFIFO()
	p.checkBestEffort(final)
	p.checkFitsAlone()
}

// withNamespaces lists each queue's namespaces, as the queue manager does.
func withNamespaces(queues []workload.Queue) []workload.Queue {
	out := slices.Clone(queues)
	for i := range out {
		out[i].Namespaces = []string{}
		for _, w := range out[i].Workloads {
			if !slices.Contains(out[i].Namespaces, w.Key.Namespace) {
				out[i].Namespaces = append(out[i].Namespaces, w.Key.Namespace)
			}
		}
	}
	return out
}

// checkOneEach: property 1.
func (p *propRun) checkOneEach() {
	p.byKey = map[types.NamespacedName]*Decision{}
	admitted := 0
	all := p.result.AllDecisions()
	for i := range all {
		d := &all[i]
		if p.byKey[d.Workload.Key] != nil {
			p.fail("%s decided twice", d.Workload.Key.Name)
		}
		p.byKey[d.Workload.Key] = d
		if d.Admit {
			admitted++
			p.stats.admitted++
			if d.Assignment.Borrowing() {
				p.stats.borrowing++
			}
			for i, ps := range d.Assignment.PodSets {
				if ps.Count < d.Workload.Shape.PodSets[i].Count {
					p.stats.partial++
				}
			}
		} else {
			p.stats.reasons[d.Reason]++
		}
		if !d.Admit && d.Reason == "" {
			p.fail("%s refused without a reason", d.Workload.Key.Name)
		}
	}
	for _, w := range p.c.pending {
		if p.byKey[w.Key] == nil {
			p.fail("%s got no decision", w.Key.Name)
		}
	}
	if len(all) != len(p.c.pending) || p.result.Workloads() != len(all) {
		p.fail("%d decisions (Workloads() %d) for %d pending workloads", len(all), p.result.Workloads(), len(p.c.pending))
	}
	if admitted != p.result.Admitted {
		p.fail("Result.Admitted = %d, but %d decisions admit", p.result.Admitted, admitted)
	}
}

// checkAdmissions: properties 3 and 4 (replay). It returns the tree with
// every admission (and every preemptor's held quota) applied.
func (p *propRun) checkAdmissions() *hierarchy.Tree {
	tree := p.snap.Tree.Clone()
	for i := range p.result.Decisions {
		d := &p.result.Decisions[i]
		if len(d.Held) > 0 {
			// Quota held for the rest of the cycle (a preemptor's, or an
			// unreclaimable share of one that found no victims).
			tree.AddUsage(tree.ClusterQueue(d.Workload.ClusterQueue), d.Held)
			continue
		}
		if !d.Admit {
			continue
		}
		name := d.Workload.Key.Name
		cq := p.snap.ClusterQueues[d.Workload.ClusterQueue]
		if cq == nil {
			p.fail("%s admitted in missing ClusterQueue %s", name, d.Workload.ClusterQueue)
		}
		if in, inactive := p.snap.ClusterQueueInactive(cq.Name); inactive {
			p.fail("%s admitted in inactive ClusterQueue %s (%s)", name, cq.Name, in.Message)
		}
		if d.Assignment == nil || d.Assignment.Mode != flavors.Fit {
			p.fail("%s admitted without a fitting assignment", name)
		}
		usage := p.checkPodSets(d, cq)
		if !propEqualUsage(usage, d.Assignment.Usage) {
			p.fail("%s: assignment usage %v, but its PodSets' requests on the assigned flavors are %v", name, d.Assignment.Usage, usage)
		}
		node := tree.ClusterQueue(cq.Name)
		for _, fr := range d.Assignment.Usage.Keys() {
			if a := d.Assignment.Usage[fr]; a > node.Available(fr) {
				p.fail("%s admitted with %d of %s, but only %d was available at that point", name, a, fr, node.Available(fr))
			}
		}
		again := propAssign(p.snap, tree, p.c.opts, d.Workload)
		if got, want := propAssignment(&again), propAssignment(d.Assignment); got != want {
			p.fail("%s: admitted with %s, but the assignment at that point is %s (stale evaluation?)", name, want, got)
		}
		p.checkLevelAndCount(d, cq, node)
		tree.AddUsage(node, d.Assignment.Usage)
	}
	return tree
}

// realUsage is the tree as it really is after the cycle: the snapshot plus
// the admissions. With preempted, it is the state once the victims are gone
// and their preemptors admitted in their place.
func (p *propRun) realUsage(preempted bool) *hierarchy.Tree {
	tree := p.snap.Tree.Clone()
	for _, d := range p.result.Decisions {
		node := tree.ClusterQueue(d.Workload.ClusterQueue)
		switch {
		case d.Admit:
			tree.AddUsage(node, d.Assignment.Usage)
		case preempted && len(d.Victims) > 0:
			for _, v := range d.Victims {
				tree.RemoveUsage(tree.ClusterQueue(v.Workload.ClusterQueue), v.Workload.Usage)
			}
			tree.AddUsage(node, d.Assignment.Usage)
		}
	}
	return tree
}

// checkLevelAndCount, at the point of admission: the borrowing level is 0
// exactly when the usage stays within the queue's own quota; and a
// single-PodSet workload admitted partially would not fit with one more pod
// (fewer pods never need more quota, so the largest count is found).
func (p *propRun) checkLevelAndCount(d *Decision, cq *state.ClusterQueue, node *hierarchy.Node) {
	name := d.Workload.Key.Name
	borrows := false
	for fr, a := range d.Assignment.Usage {
		if node.Usage(fr)+a > node.SubtreeQuota(fr) {
			borrows = true
		}
	}
	if borrows != d.Assignment.Borrowing() {
		p.fail("%s: borrowing level %d, but the usage beyond the queue's own quota says borrowing=%v", name, d.Assignment.BorrowingLevel, borrows)
	}
	shape := d.Workload.Shape
	if len(shape.PodSets) != 1 || d.Assignment.PodSets[0].Count == shape.PodSets[0].Count {
		return
	}
	more := d.Assignment.PodSets[0].Count + 1
	a := flavors.NewAssigner(p.snap.Flavors, p.c.opts.Flavors)
	if asg := a.Assign(cq, node, shape, []int32{more}); asg.Mode == flavors.Fit {
		p.fail("%s admitted with %d pods, but %d fit: %s", name, more-1, more, propAssignment(&asg))
	}
}

// checkPodSets checks one admitted assignment's PodSets and returns the
// usage they add up to.
func (p *propRun) checkPodSets(d *Decision, cq *state.ClusterQueue) resources.FlavorResourceQuantities {
	name := d.Workload.Key.Name
	shape := d.Workload.Shape
	if len(d.Assignment.PodSets) != len(shape.PodSets) {
		p.fail("%s: %d PodSet assignments for %d PodSets", name, len(d.Assignment.PodSets), len(shape.PodSets))
	}
	usage := resources.FlavorResourceQuantities{}
	for i := range shape.PodSets {
		ps, psa := &shape.PodSets[i], &d.Assignment.PodSets[i]
		if psa.Name != ps.Name {
			p.fail("%s: PodSet assignment %d is %s, want %s", name, i, psa.Name, ps.Name)
		}
		if psa.Count != ps.Count && (ps.MinCount == 0 || psa.Count < ps.MinCount || psa.Count > ps.Count) {
			p.fail("%s/%s: count %d, want %d (minCount %d)", name, ps.Name, psa.Count, ps.Count, ps.MinCount)
		}
		if !maps.Equal(psa.Requests, ps.PerPod.Scaled(int64(psa.Count))) {
			p.fail("%s/%s: requests %v for %d pods of %v", name, ps.Name, psa.Requests, psa.Count, ps.PerPod)
		}
		groupFlavor := map[*state.ResourceGroup]kueue.ResourceFlavorReference{}
		for _, r := range ps.Resources {
			if ps.PerPod[r] == 0 && r != corev1.ResourcePods {
				continue
			}
			f, assigned := psa.Flavors[r]
			group := cq.GroupFor(r)
			if group == nil {
				if assigned {
					p.fail("%s/%s: %s is not covered by %s but got flavor %s", name, ps.Name, r, cq.Name, f)
				}
				if r != corev1.ResourcePods && !p.c.opts.Flavors.IgnoreUndeclared {
					p.fail("%s/%s: requests %s, which %s does not cover (BlockUndeclared)", name, ps.Name, r, cq.Name)
				}
				continue
			}
			if !assigned || !slices.Contains(group.Flavors, f) {
				p.fail("%s/%s: %s got flavor %q, not one of its group's %v", name, ps.Name, r, f, group.Flavors)
			}
			if prev, ok := groupFlavor[group]; ok && prev != f {
				p.fail("%s/%s: resources of one group got flavors %s and %s", name, ps.Name, prev, f)
			}
			groupFlavor[group] = f
			if fl := p.snap.Flavors[f]; fl == nil || !propEligible(ps, fl) {
				p.fail("%s/%s: flavor %s is missing or not eligible for the PodSet", name, ps.Name, f)
			}
			fr := resources.FlavorResource{Flavor: f, Resource: r}
			usage[fr] += ps.PerPod[r] * int64(psa.Count)
		}
	}
	if d.Assignment.TotalCount() == 0 {
		p.fail("%s admitted with no pods", name)
	}
	return usage
}

// propCheckLimits: property 4, every active node within its limits.
func propCheckLimits(p *propRun, tree *hierarchy.Tree) {
	p.t.Helper()
	frs := p.c.flavorResources()
	var nodes []*hierarchy.Node
	for _, n := range tree.ClusterQueueNames() {
		nodes = append(nodes, tree.ClusterQueue(n))
	}
	for _, n := range tree.CohortNames() {
		nodes = append(nodes, tree.Cohort(n))
	}
	for _, n := range nodes {
		if !n.Active() {
			continue
		}
		for _, fr := range frs {
			u, q := n.Usage(fr), n.SubtreeQuota(fr)
			if n.Parent() == nil {
				if u > q {
					p.fail("after the admissions, root %s uses %d of %s beyond its subtree quota %d", n.Name(), u, fr, q)
				}
				continue
			}
			quota, ok := n.Quota(fr)
			if !ok || quota.BorrowingLimit == resources.Unlimited {
				continue
			}
			var g resources.Amount
			if quota.LendingLimit != resources.Unlimited {
				g = max(0, q-quota.LendingLimit)
			}
			if drawn := max(0, u-g); drawn > q-g+quota.BorrowingLimit {
				p.fail("after the admissions, %s draws %d of %s from its parent, beyond lent %d + borrowingLimit %d",
					n.Name(), drawn, fr, q-g, quota.BorrowingLimit)
			}
		}
	}
}

// assignmentReasons are the refusals made by flavor assignment (as opposed
// to queue-level prechecks).
var assignmentReasons = []Reason{NoMatchingFlavor, ExceedsMaxQuota, WaitingForQuota}

// checkStrictFIFO: property 5.
func (p *propRun) checkStrictFIFO() {
	for _, q := range p.queues {
		cq := p.snap.ClusterQueues[q.ClusterQueue]
		if cq == nil || cq.QueueingStrategy != kueue.StrictFIFO {
			continue
		}
		var head *workload.Info
		for _, w := range q.Workloads {
			d := p.byKey[w.Key]
			if head != nil {
				p.stats.strictBlocked++
				if d.Admit {
					p.fail("StrictFIFO %s admitted %s behind %s, which was refused (%s)", cq.Name, w.Key.Name, head.Key.Name, p.byKey[head.Key].Reason)
				}
				if slices.Contains(assignmentReasons, d.Reason) {
					p.fail("StrictFIFO %s evaluated %s behind refused head %s", cq.Name, w.Key.Name, head.Key.Name)
				}
				continue
			}
			if !d.Admit && slices.Contains(assignmentReasons, d.Reason) {
				head = w
			}
		}
	}
}

// checkBestEffort: property 6.
func (p *propRun) checkBestEffort(final *hierarchy.Tree) {
	for _, q := range p.queues {
		cq := p.snap.ClusterQueues[q.ClusterQueue]
		if cq == nil {
			continue
		}
		var refused []*workload.Info
		for _, w := range q.Workloads {
			d := p.byKey[w.Key]
			single := len(w.Shape.PodSets) == 1
			if !d.Admit && slices.Contains(assignmentReasons, d.Reason) && single {
				if asg := propAssign(p.snap, final, p.c.opts, w); asg.Mode == flavors.Fit {
					p.fail("%s was refused (%s) but fits the tree after all admissions: %s", w.Key.Name, d.Reason, propAssignment(&asg))
				}
				refused = append(refused, w)
			}
			if !d.Admit || !single || cq.QueueingStrategy != kueue.BestEffortFIFO {
				continue
			}
			for _, a := range refused {
				if propSameConstraints(&w.Shape.PodSets[0], &a.Shape.PodSets[0]) {
					p.stats.dominance++
				}
				if propDominates(&w.Shape.PodSets[0], &a.Shape.PodSets[0]) {
					p.fail("%s was admitted although the smaller %s before it in the same queue, with the same constraints, was refused (%s)",
						w.Key.Name, a.Key.Name, p.byKey[a.Key].Reason)
				}
			}
		}
	}
}

// propDominates reports whether b has a's placement constraints and asks,
// for every resource, at least as much as a at their minimum admissible
// counts.
func propDominates(b, a *workload.PodSetShape) bool {
	if !propSameConstraints(a, b) {
		return false
	}
	minCount := func(ps *workload.PodSetShape) int64 {
		if ps.MinCount > 0 && ps.MinCount < ps.Count {
			return int64(ps.MinCount)
		}
		return int64(ps.Count)
	}
	for r, v := range a.PerPod {
		if v*minCount(a) > b.PerPod[r]*minCount(b) {
			return false
		}
	}
	return true
}

func propSameConstraints(a, b *workload.PodSetShape) bool {
	return maps.Equal(a.NodeSelector, b.NodeSelector) && reflect.DeepEqual(a.RequiredAffinity, b.RequiredAffinity) &&
		reflect.DeepEqual(a.Tolerations, b.Tolerations)
}

// checkFitsAlone: property 7, for every pending workload.
func (p *propRun) checkFitsAlone() {
	empty := p.c.build(false).Snapshot()
	for _, w := range p.c.pending {
		if !propFitsAlone(empty, p.c.opts, w) {
			continue
		}
		p.stats.fitsAlone++
		res := Decide(empty, []workload.Queue{{ClusterQueue: w.ClusterQueue, Workloads: []*workload.Info{w}}}, p.c.opts)
		if len(res.Decisions) != 1 || !res.Decisions[0].Admit {
			p.fail("%s fits alone in the empty tree but was not admitted: %s", w.Key.Name, describe(res))
		}
	}
}

// propFitsAlone is a sufficient condition for w to be admitted alone in an
// empty tree, whatever flavors the greedy assignment picks: its queue is
// active, every requested resource is covered (or ignorable), every PodSet
// has an eligible flavor in every group it needs, and every such flavor can
// hold, for each resource the PodSet requests, the whole workload's request.
func propFitsAlone(snap *state.Snapshot, opts Options, w *workload.Info) bool {
	cq := snap.ClusterQueues[w.ClusterQueue]
	if cq == nil {
		return false
	}
	if _, inactive := snap.ClusterQueueInactive(cq.Name); inactive || !snap.NamespaceAllowed(cq, w.Key.Namespace) {
		return false
	}
	node := snap.Tree.ClusterQueue(cq.Name)
	total := resources.Requests{}
	for i := range w.Shape.PodSets {
		total.Add(w.Shape.PodSets[i].Requests(w.Shape.PodSets[i].Count))
	}
	for i := range w.Shape.PodSets {
		ps := &w.Shape.PodSets[i]
		for _, r := range ps.Resources {
			if ps.PerPod[r] == 0 && r != corev1.ResourcePods {
				continue
			}
			group := cq.GroupFor(r)
			if group == nil {
				if r == corev1.ResourcePods || opts.Flavors.IgnoreUndeclared {
					continue
				}
				return false
			}
			eligible := 0
			for _, f := range group.Flavors {
				fl := snap.Flavors[f]
				if fl == nil || !propEligible(ps, fl) {
					continue
				}
				eligible++
				if total[r] > node.Available(resources.FlavorResource{Flavor: f, Resource: r}) {
					return false
				}
			}
			if eligible == 0 {
				return false
			}
		}
	}
	return true
}

func propEqualUsage(a, b resources.FlavorResourceQuantities) bool {
	nonZero := func(q resources.FlavorResourceQuantities) resources.FlavorResourceQuantities {
		out := resources.FlavorResourceQuantities{}
		for fr, v := range q {
			if v != 0 {
				out[fr] = v
			}
		}
		return out
	}
	return maps.Equal(nonZero(a), nonZero(b))
}

// propAssignment renders an assignment's mode, level, flavors, counts and
// usage.
func propAssignment(a *flavors.Assignment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s level %d", a.Mode, a.BorrowingLevel)
	for _, ps := range a.PodSets {
		fmt.Fprintf(&b, " %s x%d %v", ps.Name, ps.Count, ps.Flavors)
	}
	for _, fr := range a.Usage.Keys() {
		fmt.Fprintf(&b, " %s=%d", fr, a.Usage[fr])
	}
	return b.String()
}

// propTreeDump renders every node's usage and subtree quota.
func propTreeDump(t *hierarchy.Tree) string {
	var b strings.Builder
	dump := func(n *hierarchy.Node) {
		fmt.Fprintf(&b, "%s active=%v", n.Name(), n.Active())
		usage := n.UsageAll()
		for _, fr := range usage.Keys() {
			fmt.Fprintf(&b, " %s:u=%d,q=%d", fr, usage[fr], n.SubtreeQuota(fr))
		}
		b.WriteString("\n")
	}
	for _, n := range t.ClusterQueueNames() {
		dump(t.ClusterQueue(n))
	}
	for _, n := range t.CohortNames() {
		dump(t.Cohort(n))
	}
	return b.String()
}

// TestSnapshotUsageMatchesAdmitted checks the input of Decide: whatever the
// order in which objects arrive (on restart a Workload's admission may be
// seen before its ClusterQueue; a ClusterQueue may be deleted and created
// again while its workloads still hold quota), the snapshot tree's usage
// of every ClusterQueue equals the sum of its admitted workloads' usage
// (DESIGN §5), or Decide admits beyond the limits.
func TestSnapshotUsageMatchesAdmitted(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			c := newPropCluster(seed)
			st := state.New()
			for _, f := range c.flavors {
				st.SetFlavor(f)
			}
			var events []func()
			lastCreated := map[kueue.ClusterQueueReference]int{}
			firstAssumed := map[kueue.ClusterQueueReference]int{}
			var log []string
			step := 0
			for _, co := range c.cohorts {
				events = append(events, func() { st.SetCohort(co); log = append(log, "cohort "+string(co.Name)) })
			}
			setCQ := map[kueue.ClusterQueueReference]func(){}
			for _, cq := range c.cqs {
				setCQ[cq.Name] = func() {
					if _, ok := st.ClusterQueue(cq.Name); !ok {
						lastCreated[cq.Name] = step
					}
					st.SetClusterQueue(cq)
					log = append(log, "cq "+string(cq.Name))
				}
				events = append(events, setCQ[cq.Name])
			}
			for _, a := range c.admitted {
				events = append(events, func() {
					if _, ok := firstAssumed[a.ClusterQueue]; !ok {
						firstAssumed[a.ClusterQueue] = step
					}
					if err := st.Assume(a); err != nil {
						t.Fatal(err)
					}
					log = append(log, "assume "+a.Key.Name+" in "+string(a.ClusterQueue))
				})
			}
			c.rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
			if c.rng.IntN(2) == 0 {
				cq := c.cqs[c.rng.IntN(len(c.cqs))]
				events = append(events, func() { st.DeleteClusterQueue(cq.Name); log = append(log, "delete cq "+string(cq.Name)) })
				events = append(events, setCQ[cq.Name])
			}
			for i, e := range events {
				step = i
				e()
			}
			snap := st.Snapshot()
			for _, cq := range c.cqs {
				want := resources.FlavorResourceQuantities{}
				for _, a := range snap.AdmittedIn(cq.Name) {
					want.Add(a.Usage)
				}
				got := snap.Tree.ClusterQueue(cq.Name).UsageAll()
				if propEqualUsage(got, want) {
					continue
				}
				t.Fatalf("seed %d: %s's tree usage is %v, but its admitted workloads use %v; events: %s", seed, cq.Name, got, want, strings.Join(log, ", "))
			}
		})
	}
}

// TestDecideAfterAssumeBeforeClusterQueue is the minimal reproduction of the
// bug that TestSnapshotUsageMatchesAdmitted skips: a workload admitted
// before its ClusterQueue is known (informer order on restart) is not
// counted, so Decide admits a second one beyond the nominal quota.
func TestDecideAfterAssumeBeforeClusterQueue(t *testing.T) {
	fr := resources.FlavorResource{Flavor: "default", Resource: corev1.ResourceCPU}
	st := state.New()
	st.SetFlavor(&state.Flavor{Name: "default"})
	st.SetNamespace("default", nil)
	if err := st.Assume(&state.Admitted{Key: types.NamespacedName{Namespace: "default", Name: "running"}, ClusterQueue: "cq",
		Usage: resources.FlavorResourceQuantities{fr: 4000}}); err != nil {
		t.Fatal(err)
	}
	cq := &state.ClusterQueue{Name: "cq", QueueingStrategy: kueue.BestEffortFIFO, NamespaceSelector: labels.Everything(),
		WhenCanBorrow: kueue.MayStopSearch, WhenCanPreempt: kueue.TryNextFlavor, StopPolicy: kueue.None,
		ResourceGroups: []state.ResourceGroup{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, Flavors: []kueue.ResourceFlavorReference{"default"}}},
		Quotas:         hierarchy.Quotas{fr: hierarchy.NominalOnly(4000)}}
	st.SetClusterQueue(cq)
	shape := workload.NewShape([]workload.PodSetShape{{Name: "main", Count: 4,
		PerPod: resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: resources.One}}})
	w := &workload.Info{Key: types.NamespacedName{Namespace: "default", Name: "pending"}, UID: "pending", ClusterQueue: "cq", Shape: shape}
	res := Decide(st.Snapshot(), []workload.Queue{{ClusterQueue: "cq", Workloads: []*workload.Info{w}}}, Options{})
	if res.Admitted != 0 {
		t.Fatal("4 cpu were admitted on top of 4 already held, with a nominal quota of 4: " +
			"the usage of workloads assumed before their ClusterQueue existed was lost")
	}
}
