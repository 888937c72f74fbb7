package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
	"github.com/kuota-dev/kuota/internal/workload"
)

const testRack = "example.com/rack"

// tasCluster: flavor "tas" over topology rack -> hostname, racks a and b
// of two 4-CPU nodes each; flavor "plain" without topology; ClusterQueue
// "cq" with 100 CPUs of the flavors named.
func tasCluster(t *testing.T, flavorNames ...kueue.ResourceFlavorReference) *state.State {
	t.Helper()
	return tasClusterWith(t, nil, flavorNames...)
}

func tasClusterWith(t *testing.T, preemption *kueue.ClusterQueuePreemption, flavorNames ...kueue.ResourceFlavorReference) *state.State {
	t.Helper()
	st := state.New()
	st.SetFlavor(&state.Flavor{Name: "tas", NodeLabels: map[string]string{"pool": "tas"}, TopologyName: "topo"})
	st.SetFlavor(&state.Flavor{Name: "plain"})
	st.SetTopology("topo", []string{testRack, corev1.LabelHostname})
	for _, n := range []struct{ name, rack string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"b2", "b"}} {
		st.SetNode(&state.Node{Name: n.name, Schedulable: true,
			Labels:      map[string]string{testRack: n.rack, corev1.LabelHostname: n.name, "pool": "tas"},
			Allocatable: resources.Requests{corev1.ResourceCPU: 4000, corev1.ResourcePods: 110}})
	}
	st.SetTopologySynced()
	var fq []kueue.FlavorQuotas
	for _, f := range flavorNames {
		fq = append(fq, kueue.FlavorQuotas{Name: f, Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")}}})
	}
	cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{}, Preemption: preemption,
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU}, Flavors: fq}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st.SetClusterQueue(cq)
	st.SetNamespace("default", map[string]string{corev1.LabelMetadataName: "default"})
	return st
}

func tasWorkload(name string, pods int32, topo *kueue.PodSetTopologyRequest, at int64) *workload.Info {
	perPod := resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: 1}
	shape := workload.NewShape([]workload.PodSetShape{{Name: "main", Count: pods, PerPod: perPod, Topology: topo}})
	return &workload.Info{Key: types.NamespacedName{Namespace: "default", Name: name}, UID: types.UID(name), ClusterQueue: "cq",
		QueueOrderTime: at, Shape: shape}
}

func decideOne(t *testing.T, st *state.State, ws ...*workload.Info) map[string]Decision {
	t.Helper()
	return decideIn(t, st, "cq", Options{}, ws...)
}

func placement(t *testing.T, d Decision) []tas.Domain {
	t.Helper()
	if !d.Admit {
		t.Fatalf("%s not admitted: %s %s", d.Workload.Key.Name, d.Reason, d.Explain())
	}
	ta := AdmissionOf("cq", d.Assignment).PodSetAssignments[0].TopologyAssignment
	if ta == nil {
		t.Fatalf("%s admitted without a topology assignment", d.Workload.Key.Name)
	}
	doms, err := tas.Domains(ta)
	if err != nil {
		t.Fatal(err)
	}
	return doms
}

// Pods asking for one rack land in one rack; the next workload of the
// cycle sees what the first took, and one that no rack can hold waits
// with TopologyPlacementFailed although the quota is free.
func TestDecidePlacesByTopology(t *testing.T) {
	st := tasCluster(t, "tas")
	rack := &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}
	got := decideOne(t, st, tasWorkload("first", 6, rack, 1), tasWorkload("second", 6, rack, 2), tasWorkload("third", 3, rack, 3))
	for _, name := range []string{"first", "second"} {
		total, racks := int32(0), map[string]bool{}
		for _, d := range placement(t, got[name]) {
			total += d.Count
			racks[d.Values[0][:1]] = true // the assignment names hosts (a1, b2): their rack is the first letter
		}
		if total != 6 || len(racks) != 1 {
			t.Fatalf("%s: want 6 pods in one rack, got %v", name, placement(t, got[name]))
		}
	}
	third := got["third"]
	if third.Admit || third.Reason != TopologyPlacementFailed {
		t.Fatalf("third: 2 CPUs are left per rack, want TopologyPlacementFailed, got admit=%v %s", third.Admit, third.Reason)
	}
	if third.Reason.ConditionReason() != "TopologyPlacementFailed" || third.Explain() == "" {
		t.Fatalf("third: condition reason %q, message %q", third.Reason.ConditionReason(), third.Explain())
	}
}

// A workload admitted earlier holds its domains: its assignment is taken
// from the tree the next cycle places on.
func TestDecideCountsAdmittedPlacements(t *testing.T) {
	st := tasCluster(t, "tas")
	rack := &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}
	d := decideOne(t, st, tasWorkload("first", 7, rack, 1))["first"]
	adm := AdmissionOf("cq", d.Assignment)
	a := &state.Admitted{Key: d.Workload.Key, ClusterQueue: "cq", Usage: d.Assignment.Usage,
		Topology: []state.TopologyUse{{Flavor: "tas", Assignment: adm.PodSetAssignments[0].TopologyAssignment,
			PerPod: resources.Requests{corev1.ResourceCPU: 1000}}}}
	if err := st.Assume(a); err != nil {
		t.Fatal(err)
	}
	if got := decideOne(t, st, tasWorkload("second", 7, rack, 2))["second"]; !got.Admit {
		t.Fatalf("the other rack is free: %s", got.Explain())
	}
	if got := decideOne(t, st, tasWorkload("second", 7, rack, 2), tasWorkload("third", 7, rack, 3))["third"]; got.Admit {
		t.Fatal("both racks are taken")
	}
}

// A PodSet with a topology request may not use a flavor without one; a
// PodSet without a request on a TAS flavor is placed anywhere it fits.
func TestDecideTopologyFlavorEligibility(t *testing.T) {
	st := tasCluster(t, "plain", "tas")
	got := decideOne(t, st, tasWorkload("topo", 2, &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}, 1))["topo"]
	if !got.Admit || got.Assignment.PodSets[0].Flavors[corev1.ResourceCPU] != "tas" {
		t.Fatalf("the topology request skips flavor plain: %+v %s", got.Assignment, got.Explain())
	}
	st = tasCluster(t, "tas")
	plain := decideOne(t, st, tasWorkload("anywhere", 16, nil, 1))["anywhere"]
	total := int32(0)
	for _, d := range placement(t, plain) {
		total += d.Count
	}
	if total != 16 {
		t.Fatalf("16 pods over the 4 nodes, got %v", placement(t, plain))
	}
	if over := decideOne(t, st, tasWorkload("too-many", 17, nil, 1))["too-many"]; over.Admit || over.Reason != TopologyPlacementFailed {
		t.Fatalf("17 one-CPU pods do not fit on 16 CPUs of nodes though the quota is 100: %v %s", over.Admit, over.Reason)
	}
	st = tasCluster(t, "plain")
	if got := decideOne(t, st, tasWorkload("topo", 2, &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}, 1))["topo"]; got.Admit ||
		got.Reason != NoMatchingFlavor {
		t.Fatalf("no flavor with a topology: want NoMatchingFlavor, got %v %s", got.Admit, got.Reason)
	}
}

// Until the nodes are listed nothing is placed by topology.
func TestDecideWaitsForNodes(t *testing.T) {
	st := state.New()
	st.SetFlavor(&state.Flavor{Name: "tas", TopologyName: "topo"})
	st.SetTopology("topo", []string{testRack})
	cq, _ := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU}, Flavors: []kueue.FlavorQuotas{{
			Name: "tas", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("10")}}}}}},
	}})
	st.SetClusterQueue(cq)
	st.SetNamespace("default", nil)
	got := decideOne(t, st, tasWorkload("w", 1, nil, 1))["w"]
	if got.Admit || got.Reason != TopologyPlacementFailed {
		t.Fatalf("want TopologyPlacementFailed before the nodes are listed, got %v %s", got.Admit, got.Reason)
	}
}

// A PodSet's own node selector keeps its pods on the nodes it admits: with
// only host a2 allowed, 4 pods fit and 5 do not, though rack a has 8 CPUs.
func TestDecidePlacesWithinThePodsNodeSelector(t *testing.T) {
	st := tasCluster(t, "tas")
	selected := func(name string, pods int32, selector map[string]string) *workload.Info {
		perPod := resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: 1}
		shape := workload.NewShape([]workload.PodSetShape{{Name: "main", Count: pods, PerPod: perPod, NodeSelector: selector,
			Topology: &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}}})
		return &workload.Info{Key: types.NamespacedName{Namespace: "default", Name: name}, UID: types.UID(name), ClusterQueue: "cq", Shape: shape}
	}
	onA2 := map[string]string{corev1.LabelHostname: "a2"}
	got := decideOne(t, st, selected("four", 4, onA2))["four"]
	doms := placement(t, got)
	if len(doms) != 1 || doms[0].Values[0] != "a2" || doms[0].Count != 4 {
		t.Fatalf("4 pods on a2, got %v", doms)
	}
	if got := decideOne(t, st, selected("five", 5, onA2))["five"]; got.Admit || got.Reason != TopologyPlacementFailed {
		t.Fatalf("a2 holds 4 pods: want TopologyPlacementFailed, got %v %s", got.Admit, got.Reason)
	}
	// Affinity on a label no node has admits no node.
	aff := selected("affinity", 1, nil)
	aff.Shape.PodSets[0].RequiredAffinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "gpu", Operator: corev1.NodeSelectorOpExists}}}}}
	if got := decideOne(t, st, aff)["affinity"]; got.Admit {
		t.Fatal("no node has label gpu")
	}
}

// holding admits a workload of priority prio with pods one-CPU pods on
// the named hosts (rack by first letter), admitted at reservedAt.
func holding(t *testing.T, st *state.State, name string, prio int32, reservedAt int64, hosts map[string]int32) *state.Admitted {
	t.Helper()
	return holdingIn(t, st, "cq", name, prio, reservedAt, hosts)
}

// holdingIn is holding for a workload of ClusterQueue cq.
func holdingIn(t *testing.T, st *state.State, cq kueue.ClusterQueueReference, name string, prio int32, reservedAt int64,
	hosts map[string]int32) *state.Admitted {
	t.Helper()
	var doms []tas.Domain
	total := int32(0)
	for _, h := range []string{"a1", "a2", "b1", "b2"} {
		if n := hosts[h]; n > 0 {
			doms = append(doms, tas.Domain{Values: []string{h}, Count: n})
			total += n
		}
	}
	a := &state.Admitted{Key: types.NamespacedName{Namespace: "default", Name: name}, UID: types.UID(name), ClusterQueue: cq,
		Priority: prio, ReservedAt: reservedAt,
		Usage: resources.FlavorResourceQuantities{{Flavor: "tas", Resource: corev1.ResourceCPU}: int64(total) * 1000},
		Topology: []state.TopologyUse{{Flavor: "tas", PerPod: resources.Requests{corev1.ResourceCPU: 1000},
			Assignment: tas.Encode([]string{corev1.LabelHostname}, doms)}}}
	if err := st.Assume(a); err != nil {
		t.Fatal(err)
	}
	return a
}

// A higher-priority workload that fits the quota but no rack preempts, in
// its own ClusterQueue, the fewest lower-priority workloads that free a
// rack, the most recently admitted first; while they are evicted it waits
// for them rather than choosing more.
func TestTopologyPreemption(t *testing.T) {
	st := tasClusterWith(t, &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}, "tas")
	holding(t, st, "old", 0, 1, map[string]int32{"a1": 3, "a2": 3})
	holding(t, st, "new", 0, 2, map[string]int32{"b1": 3, "b2": 3})
	holding(t, st, "peer", 10, 3, map[string]int32{"a1": 1})
	rack := &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}
	high := tasWorkload("high", 8, rack, 10)
	high.Priority = 10
	d := decideOne(t, st, high)["high"]
	if d.Admit || d.Reason != WaitingForPreemptedWorkloads || len(d.Victims) != 1 || d.Victims[0].Workload.Key.Name != "new" ||
		d.Victims[0].Reason != kueue.InClusterQueueReason {
		t.Fatalf("want one victim, the newer low-priority workload; got admit=%v %s %+v", d.Admit, d.Reason, d.Victims)
	}
	// Next cycle: the victim is being evicted; the workload keeps it.
	evicting := *d.Victims[0].Workload
	evicting.Evicting = true
	if err := st.Replace(&evicting); err != nil {
		t.Fatal(err)
	}
	high.Hint, high.Preempting = d.Hint(), true
	again := decideOne(t, st, high)["high"]
	if again.Admit || len(again.Victims) != 1 || again.Victims[0].Workload.Key.Name != "new" {
		t.Fatalf("while the victim is evicted no other is chosen: %s %+v", again.Reason, again.Victims)
	}
	// Once it is gone, the workload is placed in rack b.
	st.Forget(evicting.Key)
	if got := decideOne(t, st, high)["high"]; !got.Admit {
		t.Fatalf("rack b is free: %s", got.Explain())
	}
}

// Without preemption in the ClusterQueue, or with only equal or higher
// priorities holding the nodes, the workload waits.
func TestTopologyPreemptionNotAllowed(t *testing.T) {
	rack := &kueue.PodSetTopologyRequest{Required: ptr.To(testRack)}
	for name, pol := range map[string]*kueue.ClusterQueuePreemption{
		"no policy":      nil,
		"equal priority": {WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
	} {
		st := tasClusterWith(t, pol, "tas")
		prio := int32(0)
		if pol != nil {
			prio = 10
		}
		holding(t, st, "a", prio, 1, map[string]int32{"a1": 3, "a2": 3})
		holding(t, st, "b", prio, 2, map[string]int32{"b1": 3, "b2": 3})
		high := tasWorkload("high", 8, rack, 10)
		high.Priority = 10
		if d := decideOne(t, st, high)["high"]; d.Admit || d.Reason != TopologyPlacementFailed || len(d.Victims) > 0 {
			t.Errorf("%s: want TopologyPlacementFailed without victims, got %s %+v", name, d.Reason, d.Victims)
		}
	}
}

// The two PodSets of a group (a leader and its workers) land in the same
// rack, though apart the leader alone would take the tighter rack.
func TestDecidePlacesAPodSetGroupTogether(t *testing.T) {
	st := tasCluster(t, "tas")
	holding(t, st, "other", 0, 1, map[string]int32{"a1": 3}) // rack a: 5 CPUs free, rack b: 8
	perPod := resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: 1}
	topo := func() *kueue.PodSetTopologyRequest {
		return &kueue.PodSetTopologyRequest{Required: ptr.To(testRack), PodSetGroupName: ptr.To("g")}
	}
	shape := workload.NewShape([]workload.PodSetShape{
		{Name: "leader", Count: 1, PerPod: perPod, Topology: topo()},
		{Name: "workers", Count: 6, PerPod: perPod, Topology: topo()},
	})
	w := &workload.Info{Key: types.NamespacedName{Namespace: "default", Name: "lws"}, UID: "lws", ClusterQueue: "cq", Shape: shape}
	d := decideOne(t, st, w)["lws"]
	if !d.Admit {
		t.Fatalf("not admitted: %s", d.Explain())
	}
	racks := map[string]int32{}
	for _, ps := range AdmissionOf("cq", d.Assignment).PodSetAssignments {
		doms, err := tas.Domains(ps.TopologyAssignment)
		if err != nil {
			t.Fatal(err)
		}
		for _, dom := range doms {
			racks[dom.Values[0][:1]] += dom.Count
		}
		if ps.Name == "leader" && (len(doms) != 1 || doms[0].Count != 1) {
			t.Fatalf("leader: %v", doms)
		}
	}
	if len(racks) != 1 || racks["b"] != 7 {
		t.Fatalf("want leader and workers together in rack b, got %v", racks)
	}
}

// A node whose taint the flavor does not tolerate takes only pods that
// tolerate it themselves.
func TestDecidePlacesOnTaintedNodesOnlyWhenTolerated(t *testing.T) {
	st := tasCluster(t, "tas")
	for _, h := range []string{"b1", "b2"} {
		st.SetNode(&state.Node{Name: h, Schedulable: true,
			Labels:      map[string]string{testRack: "b", corev1.LabelHostname: h, "pool": "tas"},
			Allocatable: resources.Requests{corev1.ResourceCPU: 4000, corev1.ResourcePods: 110},
			Taints:      []corev1.Taint{{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}}})
	}
	shapeWith := func(tols []corev1.Toleration) *workload.Info {
		perPod := resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: 1}
		shape := workload.NewShape([]workload.PodSetShape{{Name: "main", Count: 12, PerPod: perPod, Tolerations: tols}})
		return &workload.Info{Key: types.NamespacedName{Namespace: "default", Name: "w"}, UID: "w", ClusterQueue: "cq", Shape: shape}
	}
	if got := decideOne(t, st, shapeWith(nil))["w"]; got.Admit || got.Reason != TopologyPlacementFailed {
		t.Fatalf("12 pods fit only with rack b's tainted nodes: want TopologyPlacementFailed, got %v %s", got.Admit, got.Reason)
	}
	tol := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoSchedule}}
	if got := decideOne(t, st, shapeWith(tol))["w"]; !got.Admit {
		t.Fatalf("pods that tolerate the taint use rack b: %s", got.Explain())
	}
}
