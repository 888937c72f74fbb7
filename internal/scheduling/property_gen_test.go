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
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// This file generates the random clusters and pending workloads of
// property_test.go and describes them when a property fails.

const propGPU corev1.ResourceName = "example.com/gpu"

// propCluster is one random trace: a cluster, admitted usage and pending
// workloads.
type propCluster struct {
	seed     uint64
	rng      *rand.Rand
	flavors  []*state.Flavor
	cohorts  []*state.Cohort
	cqs      []*state.ClusterQueue
	admitted []*state.Admitted
	pending  []*workload.Info
	shapes   *workload.Shapes
	opts     Options
}

func newPropCluster(seed uint64) *propCluster {
	c := &propCluster{seed: seed, rng: rand.New(rand.NewPCG(seed, 0x6b756f7461)), shapes: workload.NewShapes()}
	c.opts.Flavors.IgnoreUndeclared = c.rng.IntN(5) == 0
	c.genFlavors()
	c.genCohorts()
	c.genClusterQueues()
	c.genAdmitted()
	c.genPending()
	return c
}

func (c *propCluster) genFlavors() {
	rng := c.rng
	for i := 0; i < 1+rng.IntN(3); i++ {
		f := &state.Flavor{Name: kueue.ResourceFlavorReference(fmt.Sprintf("f%d", i)), NodeLabels: map[string]string{}}
		if rng.IntN(10) < 7 {
			f.NodeLabels["zone"] = []string{"z1", "z2"}[rng.IntN(2)]
		}
		if rng.IntN(10) < 4 {
			f.NodeLabels["arch"] = []string{"amd64", "arm64"}[rng.IntN(2)]
		}
		if rng.IntN(4) == 0 {
			effect := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule}[rng.IntN(3)]
			f.NodeTaints = []corev1.Taint{{Key: "dedicated", Value: []string{"gpu", "batch"}[rng.IntN(2)], Effect: effect}}
			if rng.IntN(5) == 0 {
				f.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
			}
		}
		c.flavors = append(c.flavors, f)
	}
}

// flavorResources lists every (flavor, resource) pair quotas may name.
func (c *propCluster) flavorResources() []resources.FlavorResource {
	var out []resources.FlavorResource
	for _, f := range c.flavors {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, propGPU} {
			out = append(out, resources.FlavorResource{Flavor: f.Name, Resource: r})
		}
	}
	return out
}

func (c *propCluster) quota(cohort bool) hierarchy.Quota {
	rng := c.rng
	q := hierarchy.NominalOnly(resources.Amount(rng.IntN(11)) * 1000)
	if cohort && rng.IntN(2) == 0 {
		q.Nominal = 0
	}
	if rng.IntN(3) == 0 {
		q.BorrowingLimit = resources.Amount(rng.IntN(7)) * 1000
	}
	if rng.IntN(3) == 0 {
		q.LendingLimit = resources.Amount(rng.IntN(int(q.Nominal/1000)+4)) * 1000
	}
	return q
}

// genCohorts makes 1-3 levels of Cohorts; some roots stay implicit, and
// sometimes a root is made the child of its own descendant (a cycle).
func (c *propCluster) genCohorts() {
	rng := c.rng
	var prev []*state.Cohort
	implicit := map[kueue.CohortReference]bool{}
	var all []*state.Cohort
	for level := 0; level < 1+rng.IntN(3); level++ {
		var cur []*state.Cohort
		for i := 0; i < 1+rng.IntN(2); i++ {
			co := &state.Cohort{Name: kueue.CohortReference(fmt.Sprintf("co%d%d", level, i)), Quotas: hierarchy.Quotas{}, FairWeight: resources.One}
			for _, fr := range c.flavorResources() {
				if rng.IntN(2) == 0 {
					co.Quotas[fr] = c.quota(true)
				}
			}
			if level > 0 {
				co.Parent = prev[rng.IntN(len(prev))].Name
			} else if rng.IntN(5) == 0 {
				implicit[co.Name] = true
			}
			cur = append(cur, co)
			all = append(all, co)
		}
		prev = cur
	}
	if rng.IntN(12) == 0 && len(prev) > 0 && prev[0].Parent != "" {
		// Close a cycle: the first root becomes the child of a deepest Cohort.
		root := all[0]
		root.Parent = prev[0].Name
		delete(implicit, root.Name)
	}
	for _, co := range all {
		if !implicit[co.Name] {
			c.cohorts = append(c.cohorts, co)
		}
	}
}

func (c *propCluster) cohortNames() []kueue.CohortReference {
	set := map[kueue.CohortReference]bool{}
	for _, co := range c.cohorts {
		set[co.Name] = true
		if co.Parent != "" {
			set[co.Parent] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func (c *propCluster) genClusterQueues() {
	rng := c.rng
	names := c.cohortNames()
	for i := 0; i < 1+rng.IntN(5); i++ {
		cq := &state.ClusterQueue{
			Name:              kueue.ClusterQueueReference(fmt.Sprintf("cq%d", i)),
			Quotas:            hierarchy.Quotas{},
			QueueingStrategy:  []kueue.QueueingStrategy{kueue.StrictFIFO, kueue.BestEffortFIFO}[rng.IntN(2)],
			NamespaceSelector: labels.Everything(),
			WhenCanBorrow:     []kueue.FlavorFungibilityPolicy{kueue.MayStopSearch, kueue.TryNextFlavor}[rng.IntN(2)],
			WhenCanPreempt:    []kueue.FlavorFungibilityPolicy{kueue.MayStopSearch, kueue.TryNextFlavor}[rng.IntN(2)],
			Preference:        []kueue.FlavorFungibilityPreference{kueue.BorrowingOverPreemption, kueue.PreemptionOverBorrowing}[rng.IntN(2)],
			StopPolicy:        kueue.None,
			FairWeight:        resources.One,
			Preemption: state.Preemption{
				WithinClusterQueue:  []kueue.PreemptionPolicy{kueue.PreemptionPolicyNever, kueue.PreemptionPolicyLowerPriority}[rng.IntN(2)],
				ReclaimWithinCohort: []kueue.PreemptionPolicy{kueue.PreemptionPolicyNever, kueue.PreemptionPolicyAny}[rng.IntN(2)],
				BorrowWithinCohort:  []kueue.BorrowWithinCohortPolicy{kueue.BorrowWithinCohortPolicyNever, kueue.BorrowWithinCohortPolicyLowerPriority}[rng.IntN(2)],
			},
		}
		if len(names) > 0 && rng.IntN(7) != 0 {
			cq.Cohort = names[rng.IntN(len(names))]
		}
		// Each flavor is in at most one group: the first group covers cpu
		// and memory (and sometimes pods), an optional second one the GPU.
		perm := rng.Perm(len(c.flavors))
		split := 1 + rng.IntN(len(perm))
		main := state.ResourceGroup{Resources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}}
		if rng.IntN(4) == 0 {
			main.Resources = append(main.Resources, corev1.ResourcePods)
		}
		for _, i := range perm[:split] {
			main.Flavors = append(main.Flavors, c.flavors[i].Name)
		}
		if rng.IntN(30) == 0 {
			main.Flavors = append(main.Flavors, "missing") // makes the queue inactive
		}
		cq.ResourceGroups = append(cq.ResourceGroups, main)
		if split < len(perm) && rng.IntN(2) == 0 {
			gpu := state.ResourceGroup{Resources: []corev1.ResourceName{propGPU}}
			for _, i := range perm[split:] {
				gpu.Flavors = append(gpu.Flavors, c.flavors[i].Name)
			}
			cq.ResourceGroups = append(cq.ResourceGroups, gpu)
		}
		for _, g := range cq.ResourceGroups {
			for _, f := range g.Flavors {
				for _, r := range g.Resources {
					cq.Quotas[resources.FlavorResource{Flavor: f, Resource: r}] = c.quota(false)
				}
			}
		}
		c.cqs = append(c.cqs, cq)
	}
}

// build returns the state, with or without the admitted workloads.
func (c *propCluster) build(withAdmitted bool) *state.State {
	st := state.New()
	for _, f := range c.flavors {
		st.SetFlavor(f)
	}
	for _, co := range c.cohorts {
		st.SetCohort(co)
	}
	for _, cq := range c.cqs {
		st.SetClusterQueue(cq)
	}
	st.SetNamespace("default", map[string]string{corev1.LabelMetadataName: "default"})
	if withAdmitted {
		for _, a := range c.admitted {
			if err := st.Assume(a); err != nil {
				panic(err)
			}
		}
	}
	return st
}

// genAdmitted adds a few running workloads, each within what its queue can
// obtain at that point (as the scheduler would have admitted them), so the
// tree starts within every limit.
func (c *propCluster) genAdmitted() {
	rng := c.rng
	st := c.build(false)
	for i := 0; i < rng.IntN(6); i++ {
		cq := c.cqs[rng.IntN(len(c.cqs))]
		frs := slices.SortedFunc(maps.Keys(cq.Quotas), resources.CompareFlavorResource)
		usage := resources.FlavorResourceQuantities{}
		snap := st.Snapshot()
		node := snap.Tree.ClusterQueue(cq.Name)
		for _, fr := range frs {
			if rng.IntN(2) == 0 {
				continue
			}
			if avail := node.Available(fr) / 500; avail >= 1 {
				usage[fr] = (1 + rng.Int64N(avail)) * 500
			}
		}
		if len(usage) == 0 {
			continue
		}
		a := &state.Admitted{Key: types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("running%d", i)},
			UID: types.UID(fmt.Sprintf("running%d", i)), ClusterQueue: cq.Name, Usage: usage}
		if err := st.Assume(a); err != nil {
			panic(err)
		}
		c.admitted = append(c.admitted, a)
	}
}

func (c *propCluster) genPending() {
	rng := c.rng
	var previous [][]workload.PodSetShape
	for i := 0; i < 2+rng.IntN(19); i++ {
		var podSets []workload.PodSetShape
		if len(previous) > 0 && rng.IntN(4) == 0 {
			// Same shape as an earlier workload: shares the interned Shape.
			for _, ps := range previous[rng.IntN(len(previous))] {
				ps.PerPod = ps.PerPod.Clone()
				ps.Resources = nil
				podSets = append(podSets, ps)
			}
		} else {
			podSets = c.genPodSets()
		}
		previous = append(previous, podSets)
		cq := kueue.ClusterQueueReference("ghost")
		if rng.IntN(30) != 0 {
			cq = c.cqs[rng.IntN(len(c.cqs))].Name
		}
		name := fmt.Sprintf("w%02d", i)
		c.pending = append(c.pending, &workload.Info{
			Key: types.NamespacedName{Namespace: "default", Name: name}, UID: types.UID(name),
			LocalQueue: "lq", ClusterQueue: cq, Priority: int32(rng.IntN(3)), QueueOrderTime: int64(rng.IntN(100)),
			Shape: c.shapes.Intern(workload.NewShape(podSets)),
		})
	}
}

func (c *propCluster) genPodSets() []workload.PodSetShape {
	rng := c.rng
	n := 1
	if rng.IntN(2) == 0 {
		n = 2 + rng.IntN(2)
	}
	partial := -1
	if rng.IntN(5) == 0 {
		partial = rng.IntN(n)
	}
	var out []workload.PodSetShape
	for i := 0; i < n; i++ {
		ps := workload.PodSetShape{Name: kueue.PodSetReference(fmt.Sprintf("ps%d", i)), Count: int32(1 + rng.IntN(4)),
			PerPod: resources.Requests{corev1.ResourcePods: resources.One}}
		if i == partial && ps.Count > 1 {
			ps.MinCount = int32(1 + rng.IntN(int(ps.Count-1)))
		}
		if v := []resources.Amount{-1, 0, 500, 1000, 2000}[rng.IntN(5)]; v >= 0 {
			ps.PerPod[corev1.ResourceCPU] = v
		}
		if v := []resources.Amount{-1, 0, 1000, 2000}[rng.IntN(4)]; v >= 0 {
			ps.PerPod[corev1.ResourceMemory] = v
		}
		if rng.IntN(6) == 0 {
			ps.PerPod[propGPU] = resources.One
		}
		if rng.IntN(4) == 0 {
			key := []string{"zone", "arch"}[rng.IntN(2)]
			val := map[string][]string{"zone": {"z1", "z2"}, "arch": {"amd64", "arm64"}}[key][rng.IntN(2)]
			ps.NodeSelector = map[string]string{key: val}
		}
		if rng.IntN(10) == 0 {
			op := []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn}[rng.IntN(2)]
			ps.RequiredAffinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: op, Values: []string{"z1"}}}}}}
		}
		switch rng.IntN(6) {
		case 0:
			ps.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
		case 1:
			ps.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
		}
		out = append(out, ps)
	}
	return out
}

// queues groups the given workloads by ClusterQueue, in queue order.
func propQueues(pending []*workload.Info) []workload.Queue {
	byCQ := map[kueue.ClusterQueueReference][]*workload.Info{}
	for _, w := range pending {
		byCQ[w.ClusterQueue] = append(byCQ[w.ClusterQueue], w)
	}
	var out []workload.Queue
	for _, cq := range slices.Sorted(maps.Keys(byCQ)) {
		ws := byCQ[cq]
		slices.SortFunc(ws, workload.Compare)
		out = append(out, workload.Queue{ClusterQueue: cq, Workloads: ws})
	}
	return out
}

// describe renders the trace compactly, for reproducing a failure.
func (c *propCluster) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ignoreUndeclared=%v\n", c.opts.Flavors.IgnoreUndeclared)
	for _, f := range c.flavors {
		fmt.Fprintf(&b, "flavor %s labels=%v taints=%v tolerations=%v\n", f.Name, f.NodeLabels, f.NodeTaints, f.Tolerations)
	}
	for _, co := range c.cohorts {
		fmt.Fprintf(&b, "cohort %s parent=%q %s\n", co.Name, co.Parent, propQuotas(co.Quotas))
	}
	for _, cq := range c.cqs {
		fmt.Fprintf(&b, "cq %s cohort=%q %s borrow=%s preempt=%s pref=%s policies=%v groups=%v %s\n", cq.Name, cq.Cohort,
			cq.QueueingStrategy, cq.WhenCanBorrow, cq.WhenCanPreempt, cq.Preference, cq.Preemption, cq.ResourceGroups, propQuotas(cq.Quotas))
	}
	for _, a := range c.admitted {
		fmt.Fprintf(&b, "admitted %s in %s usage=%v\n", a.Key.Name, a.ClusterQueue, a.Usage)
	}
	for _, q := range propQueues(slices.Clone(c.pending)) {
		for _, w := range q.Workloads {
			fmt.Fprintf(&b, "pending %s in %s prio=%d time=%d %s\n", w.Key.Name, w.ClusterQueue, w.Priority, w.QueueOrderTime, propShape(w.Shape))
		}
	}
	return b.String()
}

func propShape(s *workload.Shape) string {
	var parts []string
	for _, ps := range s.PodSets {
		p := fmt.Sprintf("%s x%d", ps.Name, ps.Count)
		if ps.MinCount > 0 {
			p += fmt.Sprintf(" (min %d)", ps.MinCount)
		}
		p += fmt.Sprintf(" %v", map[corev1.ResourceName]resources.Amount(ps.PerPod))
		if len(ps.NodeSelector) > 0 {
			p += fmt.Sprintf(" selector=%v", ps.NodeSelector)
		}
		if ps.RequiredAffinity != nil {
			p += " affinity=" + ps.RequiredAffinity.String()
		}
		if len(ps.Tolerations) > 0 {
			p += fmt.Sprintf(" tolerations=%v", ps.Tolerations)
		}
		parts = append(parts, "["+p+"]")
	}
	return strings.Join(parts, " ")
}

func propQuotas(qs hierarchy.Quotas) string {
	var parts []string
	for _, fr := range slices.SortedFunc(maps.Keys(qs), resources.CompareFlavorResource) {
		q := qs[fr]
		s := fmt.Sprintf("%s=%d", fr, q.Nominal)
		if q.BorrowingLimit != resources.Unlimited {
			s += fmt.Sprintf(",bl=%d", q.BorrowingLimit)
		}
		if q.LendingLimit != resources.Unlimited {
			s += fmt.Sprintf(",ll=%d", q.LendingLimit)
		}
		parts = append(parts, s)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// propEligible is an independent check that a PodSet may use a flavor:
// node selector and required affinity only on keys the flavor defines, and
// every NoSchedule/NoExecute taint tolerated by the pod or the flavor.
func propEligible(ps *workload.PodSetShape, f *state.Flavor) bool {
	for k, v := range ps.NodeSelector {
		if have, ok := f.NodeLabels[k]; ok && have != v {
			return false
		}
	}
	if ps.RequiredAffinity != nil && len(ps.RequiredAffinity.NodeSelectorTerms) > 0 {
		anyTerm := false
		for _, term := range ps.RequiredAffinity.NodeSelectorTerms {
			ok := true
			for _, e := range term.MatchExpressions {
				have, defined := f.NodeLabels[e.Key]
				if !defined {
					continue
				}
				switch e.Operator {
				case corev1.NodeSelectorOpIn:
					ok = ok && slices.Contains(e.Values, have)
				case corev1.NodeSelectorOpNotIn:
					ok = ok && !slices.Contains(e.Values, have)
				}
			}
			anyTerm = anyTerm || ok
		}
		if !anyTerm {
			return false
		}
	}
	for _, taint := range f.NodeTaints {
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !propTolerated(taint, ps.Tolerations) && !propTolerated(taint, f.Tolerations) {
			return false
		}
	}
	return true
}

func propTolerated(taint corev1.Taint, tols []corev1.Toleration) bool {
	for _, tol := range tols {
		if tol.Effect != "" && tol.Effect != taint.Effect {
			continue
		}
		if tol.Operator == corev1.TolerationOpExists && (tol.Key == "" || tol.Key == taint.Key) {
			return true
		}
		if tol.Operator != corev1.TolerationOpExists && tol.Key == taint.Key && tol.Value == taint.Value {
			return true
		}
	}
	return false
}

// propAssign recomputes the head evaluation of Decide: full counts first,
// then partial admission.
func propAssign(snap *state.Snapshot, tree *hierarchy.Tree, opts Options, w *workload.Info) flavors.Assignment {
	a := flavors.NewAssigner(snap.Flavors, opts.Flavors)
	cq := snap.ClusterQueues[w.ClusterQueue]
	node := tree.ClusterQueue(w.ClusterQueue)
	asg := a.Assign(cq, node, w.Shape, nil)
	if asg.Mode != flavors.Fit && w.Shape.HasPartialAdmission() {
		if partial, ok := a.AssignPartial(cq, node, w.Shape, nil); ok {
			return partial
		}
	}
	return asg
}
