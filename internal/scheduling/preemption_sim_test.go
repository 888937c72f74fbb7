package scheduling

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// This file holds a small, deterministic, test-only simulator of the
// manager around Decide, for the multi-cycle properties of
// preemption_property_test.go. Each cycle takes a snapshot of a
// state.State, hands Decide the pending workloads in queue order, then
// applies the decisions as the manager would: an admitted workload is
// assumed (its usage, priority and queue-order time, reserved at the cycle's
// time) and leaves the pending set; every victim is forgotten at once (its
// eviction completes immediately) and goes back to pending with its original
// shape, priority and time (it was requeued); the preemptor (with or
// without victims of its own) stays pending, marked Preempting, for one
// cycle. Between cycles the caller finishes running workloads and adds new
// ones.

// simTimeStep is the time between two cycles (queue-order and reservation
// times are in these units).
const simTimeStep = 1000

type sim struct {
	st   *state.State
	opts Options
	// orig is every workload as created: what a victim is requeued as.
	orig    map[types.NamespacedName]*workload.Info
	pending map[types.NamespacedName]*workload.Info
	running map[types.NamespacedName]*state.Admitted
	cycle   int
	log     []string
	// onErr reports an inconsistency of the simulation itself.
	onErr func(string)
}

// simCycle is one Decide call and its input.
type simCycle struct {
	n      int
	snap   *state.Snapshot
	queues []workload.Queue
	res    Result
	// preempting are the preemptors of the cycle before (still pending).
	preempting []types.NamespacedName
}

func newSim(st *state.State, opts Options, onErr func(string)) *sim {
	return &sim{st: st, opts: opts, orig: map[types.NamespacedName]*workload.Info{},
		pending: map[types.NamespacedName]*workload.Info{}, running: map[types.NamespacedName]*state.Admitted{}, onErr: onErr}
}

func (s *sim) now() int64 { return int64(s.cycle) * simTimeStep }

func (s *sim) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf("c%02d ", s.cycle)+fmt.Sprintf(format, args...))
}

// add queues a new workload.
func (s *sim) add(w *workload.Info) {
	s.orig[w.Key] = w
	s.pending[w.Key] = w
	s.logf("arrive %s in %s prio=%d time=%d %s", w.Key.Name, w.ClusterQueue, w.Priority, w.QueueOrderTime, propShape(w.Shape))
}

// finish ends a running workload (it completes and releases its quota).
func (s *sim) finish(key types.NamespacedName) {
	a := s.running[key]
	if !s.st.Forget(key) {
		s.onErr(fmt.Sprintf("finish %s: not admitted", key.Name))
	}
	delete(s.running, key)
	s.logf("finish %s in %s", key.Name, a.ClusterQueue)
}

// runningKeys lists the running workloads in a stable order.
func (s *sim) runningKeys() []types.NamespacedName {
	return slices.SortedFunc(maps.Keys(s.running), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
}

// decide runs one cycle's Decide without applying it.
func (s *sim) decide() *simCycle {
	s.cycle++
	c := &simCycle{n: s.cycle, snap: s.st.Snapshot()}
	for _, k := range slices.SortedFunc(maps.Keys(s.pending), func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) }) {
		if s.pending[k].Preempting {
			c.preempting = append(c.preempting, k)
		}
	}
	c.queues = propQueues(slices.Collect(maps.Values(s.pending)))
	c.res = Decide(c.snap, c.queues, s.opts)
	return c
}

// apply carries out a cycle's decisions. It returns the number of
// admissions and of preemptions (preemptors, with or without victims).
func (s *sim) apply(c *simCycle) (admitted, preemptions int) {
	for _, d := range c.res.AllDecisions() {
		w := d.Workload
		switch {
		case d.Admit:
			a := &state.Admitted{Key: w.Key, UID: w.UID, ClusterQueue: w.ClusterQueue, Priority: w.Priority,
				Usage: d.Assignment.Usage.Clone(), MinUsage: MinUsage(w.Shape, d.Assignment), ReservedAt: s.now(), QueueOrderTime: w.QueueOrderTime}
			if err := s.st.Assume(a); err != nil {
				s.onErr(fmt.Sprintf("admit %s: %v", w.Key.Name, err))
			}
			s.running[w.Key] = a
			delete(s.pending, w.Key)
			admitted++
			s.logf("admit %s in %s prio=%d%s usage=%s", w.Key.Name, w.ClusterQueue, w.Priority, simIf(w.Preempting, " (preemptor)"), simUsage(d.Assignment.Usage))
		case d.Reason == WaitingForPreemptedWorkloads:
			var names []string
			for _, v := range d.Victims {
				a := v.Workload
				if !s.st.Forget(a.Key) {
					s.onErr(fmt.Sprintf("%s preempts %s, which does not hold quota", w.Key.Name, a.Key.Name))
				}
				delete(s.running, a.Key)
				s.pending[a.Key] = s.orig[a.Key]
				names = append(names, fmt.Sprintf("%s(%s,p%d,%s)", a.Key.Name, a.ClusterQueue, a.Priority, v.Reason))
			}
			preemptions++
			p := *w
			p.Preempting = true
			p.Hint = d.Hint()
			s.pending[w.Key] = &p
			s.logf("%s in %s prio=%d time=%d preempts %s for %s (contested %v)", w.Key.Name, w.ClusterQueue, w.Priority, w.QueueOrderTime,
				strings.Join(names, " "), simUsage(d.Assignment.Usage), d.Assignment.PreemptFor)
		case w.Preempting:
			// A preemptor that neither got in nor preempted again goes
			// back to an ordinary place in its queue.
			s.pending[w.Key] = s.orig[w.Key]
		}
	}
	return admitted, preemptions
}

func simIf(b bool, s string) string {
	if b {
		return s
	}
	return ""
}

func simUsage(u resources.FlavorResourceQuantities) string {
	var parts []string
	for _, fr := range u.Keys() {
		if u[fr] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", fr, u[fr]))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// simLimits checks every active node of the tree against its limits, as
// propCheckLimits does (root U <= Q; with a borrowing limit, what a node
// draws from its parent is at most what it lends plus the limit). It
// returns a description of the first violation, or "".
func simLimits(tree *hierarchy.Tree, frs []resources.FlavorResource) string {
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
					return fmt.Sprintf("root %s uses %d of %s beyond its subtree quota %d", n.Name(), u, fr, q)
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
				return fmt.Sprintf("%s draws %d of %s from its parent, beyond lent %d + borrowingLimit %d", n.Name(), drawn, fr, q-g, quota.BorrowingLimit)
			}
		}
	}
	return ""
}

// simFits reports whether usage fits a ClusterQueue node now (Available in
// every pair); without borrowing it must also stay within the queue's own
// quota.
func simFits(node *hierarchy.Node, usage resources.FlavorResourceQuantities, allowBorrowing bool) bool {
	for fr, need := range usage {
		if need > node.Available(fr) {
			return false
		}
		if !allowBorrowing && node.Usage(fr)+need > node.SubtreeQuota(fr) {
			return false
		}
	}
	return true
}

// simLCA returns the lowest common ancestor of two nodes of one tree, or
// nil (computed from the parent chains, independently of the core).
func simLCA(a, b *hierarchy.Node) *hierarchy.Node {
	seen := map[*hierarchy.Node]bool{}
	for n := a.Parent(); n != nil; n = n.Parent() {
		seen[n] = true
	}
	for n := b.Parent(); n != nil; n = n.Parent() {
		if seen[n] {
			return n
		}
	}
	return nil
}

// simChildToward returns the ancestor of n (or n) whose parent is top.
func simChildToward(top, n *hierarchy.Node) *hierarchy.Node {
	for ; n != nil; n = n.Parent() {
		if n.Parent() == top {
			return n
		}
	}
	return nil
}

// simUnder reports whether n is top or one of its descendants.
func simUnder(n, top *hierarchy.Node) bool {
	for ; n != nil; n = n.Parent() {
		if n == top {
			return true
		}
	}
	return false
}

// newContendedCluster returns a small cluster built for contention: one
// or two plain flavors, a root Cohort (sometimes with quota of its own, and
// sometimes two child Cohorts), and 2-4 ClusterQueues in it with cpu and
// memory quotas of a few units, sometimes with borrowing and lending
// limits. Pending workloads are added by the caller.
func newContendedCluster(seed uint64) *propCluster {
	c := &propCluster{seed: seed, rng: rand.New(rand.NewPCG(seed, 0x636f6e74656e64)), shapes: workload.NewShapes()}
	rng := c.rng
	for i := 0; i < 1+rng.IntN(2); i++ {
		c.flavors = append(c.flavors, &state.Flavor{Name: kueue.ResourceFlavorReference(fmt.Sprintf("f%d", i)), NodeLabels: map[string]string{}})
	}
	quota := func(maxNominal int) hierarchy.Quota {
		q := hierarchy.NominalOnly(resources.Amount(rng.IntN(maxNominal+1)) * 1000)
		if rng.IntN(4) == 0 {
			q.BorrowingLimit = resources.Amount(rng.IntN(5)) * 1000
		}
		if rng.IntN(4) == 0 {
			q.LendingLimit = resources.Amount(rng.IntN(int(q.Nominal/1000)+1)) * 1000
		}
		return q
	}
	root := &state.Cohort{Name: "root", Quotas: hierarchy.Quotas{}, FairWeight: resources.One}
	if rng.IntN(2) == 0 {
		for _, f := range c.flavors {
			root.Quotas[resources.FlavorResource{Flavor: f.Name, Resource: corev1.ResourceCPU}] = hierarchy.NominalOnly(resources.Amount(rng.IntN(7)) * 1000)
		}
	}
	c.cohorts = append(c.cohorts, root)
	leaves := []kueue.CohortReference{"root"}
	if rng.IntN(3) == 0 {
		leaves = nil
		for _, name := range []kueue.CohortReference{"left", "right"} {
			co := &state.Cohort{Name: name, Parent: "root", Quotas: hierarchy.Quotas{}, FairWeight: resources.One}
			if rng.IntN(2) == 0 {
				co.Quotas[resources.FlavorResource{Flavor: "f0", Resource: corev1.ResourceCPU}] = quota(4)
			}
			c.cohorts = append(c.cohorts, co)
			leaves = append(leaves, name)
		}
	}
	for i := 0; i < 2+rng.IntN(3); i++ {
		cq := &state.ClusterQueue{
			Name:              kueue.ClusterQueueReference(fmt.Sprintf("cq%d", i)),
			Cohort:            leaves[rng.IntN(len(leaves))],
			Quotas:            hierarchy.Quotas{},
			QueueingStrategy:  []kueue.QueueingStrategy{kueue.StrictFIFO, kueue.BestEffortFIFO, kueue.BestEffortFIFO}[rng.IntN(3)],
			NamespaceSelector: labels.Everything(),
			WhenCanBorrow:     []kueue.FlavorFungibilityPolicy{kueue.MayStopSearch, kueue.TryNextFlavor}[rng.IntN(2)],
			WhenCanPreempt:    []kueue.FlavorFungibilityPolicy{kueue.MayStopSearch, kueue.TryNextFlavor}[rng.IntN(2)],
			Preference:        []kueue.FlavorFungibilityPreference{kueue.BorrowingOverPreemption, kueue.PreemptionOverBorrowing}[rng.IntN(2)],
			StopPolicy:        kueue.None,
			FairWeight:        resources.One,
		}
		group := state.ResourceGroup{Resources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}}
		for _, f := range c.flavors {
			group.Flavors = append(group.Flavors, f.Name)
			cq.Quotas[resources.FlavorResource{Flavor: f.Name, Resource: corev1.ResourceCPU}] = quota(8)
			cq.Quotas[resources.FlavorResource{Flavor: f.Name, Resource: corev1.ResourceMemory}] = quota(8)
		}
		cq.ResourceGroups = []state.ResourceGroup{group}
		c.cqs = append(c.cqs, cq)
	}
	return c
}

// simLowestFitting walks up from n adding amount of fr (and what each node
// then draws from its parent) and returns the first node whose subtree
// quota covers its usage, or nil: the pool the usage would come from.
// Written from the quota model (DESIGN 4, hierarchy package comment), not
// with the hierarchy package's own walk.
func simLowestFitting(n *hierarchy.Node, fr resources.FlavorResource, amount resources.Amount) *hierarchy.Node {
	delta := amount
	for node := n; node != nil; node = node.Parent() {
		old := node.Usage(fr)
		updated := old + delta
		if updated <= node.SubtreeQuota(fr) {
			return node
		}
		if node.Parent() == nil || !node.Active() {
			return nil
		}
		var g resources.Amount
		if q, ok := node.Quota(fr); ok && q.LendingLimit != resources.Unlimited {
			g = max(0, node.SubtreeQuota(fr)-q.LendingLimit)
		}
		delta = max(0, updated-g) - max(0, old-g)
	}
	return nil
}

// simWithinNominal: the queue stays within its own quota in every contested
// pair with usage added.
func simWithinNominal(node *hierarchy.Node, usage resources.FlavorResourceQuantities, contested []resources.FlavorResource) bool {
	for _, fr := range contested {
		if node.Usage(fr)+usage[fr] > node.SubtreeQuota(fr) {
			return false
		}
	}
	return true
}

func simName(n *hierarchy.Node) string {
	if n == nil {
		return "<none>"
	}
	return n.Name()
}

// simQueue returns a BestEffortFIFO ClusterQueue covering cpu with the
// given flavors (in order) and nominal quotas, for the reproductions.
func simQueue(name kueue.ClusterQueueReference, cohort kueue.CohortReference, p state.Preemption, nominal map[kueue.ResourceFlavorReference]resources.Amount, flavors ...kueue.ResourceFlavorReference) *state.ClusterQueue {
	cq := &state.ClusterQueue{Name: name, Cohort: cohort, Quotas: hierarchy.Quotas{},
		ResourceGroups:    []state.ResourceGroup{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, Flavors: flavors}},
		QueueingStrategy:  kueue.BestEffortFIFO,
		NamespaceSelector: labels.Everything(),
		WhenCanBorrow:     kueue.MayStopSearch, WhenCanPreempt: kueue.TryNextFlavor, Preference: kueue.BorrowingOverPreemption,
		StopPolicy: kueue.None, FairWeight: resources.One, Preemption: p}
	for _, f := range flavors {
		cq.Quotas[resources.FlavorResource{Flavor: f, Resource: corev1.ResourceCPU}] = hierarchy.NominalOnly(nominal[f])
	}
	return cq
}

// simCPU is n cpus of a flavor.
func simCPU(f kueue.ResourceFlavorReference, n int64) resources.FlavorResourceQuantities {
	return resources.FlavorResourceQuantities{{Flavor: f, Resource: corev1.ResourceCPU}: n * resources.One}
}

// simRunning is an admitted workload for the reproductions.
func simRunning(name string, cq kueue.ClusterQueueReference, prio int32, reservedAt int64, usage resources.FlavorResourceQuantities) *state.Admitted {
	return &state.Admitted{Key: types.NamespacedName{Namespace: "default", Name: name}, UID: types.UID(name), ClusterQueue: cq,
		Priority: prio, Usage: usage, ReservedAt: reservedAt, QueueOrderTime: reservedAt}
}

// simPending is a pending workload with the given PodSets.
func simPending(shapes *workload.Shapes, name string, cq kueue.ClusterQueueReference, prio int32, time int64, podSets ...workload.PodSetShape) *workload.Info {
	return &workload.Info{Key: types.NamespacedName{Namespace: "default", Name: name}, UID: types.UID(name), LocalQueue: "lq",
		ClusterQueue: cq, Priority: prio, QueueOrderTime: time, Shape: shapes.Intern(workload.NewShape(podSets))}
}

// simPodSet is count pods of cpus each, optionally bound by a node selector.
func simPodSet(name string, count int32, cpus int64, selector map[string]string) workload.PodSetShape {
	return workload.PodSetShape{Name: kueue.PodSetReference(name), Count: count, NodeSelector: selector,
		PerPod: resources.Requests{corev1.ResourceCPU: cpus * resources.One, corev1.ResourcePods: resources.One}}
}
