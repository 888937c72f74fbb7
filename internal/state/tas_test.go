package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/tas"
)

const rackLabel = "example.com/rack"

func tasNode(name, rack string, cpuMilli int64) *Node {
	return &Node{Name: name, Labels: map[string]string{rackLabel: rack, "pool": "tas"}, Schedulable: true,
		Allocatable: resources.Requests{corev1.ResourceCPU: cpuMilli, corev1.ResourcePods: 110}}
}

// newTASTestState has flavor "f" on the nodes of pool=tas, topology "topo" by
// rack, and two racks of two 4-CPU nodes each.
func newTASTestState(t *testing.T) *State {
	t.Helper()
	s := New()
	s.SetFlavor(&Flavor{Name: "f", NodeLabels: map[string]string{"pool": "tas"}, TopologyName: "topo"})
	s.SetTopology("topo", []string{rackLabel})
	for _, n := range []*Node{tasNode("a1", "a", 4000), tasNode("a2", "a", 4000), tasNode("b1", "b", 4000), tasNode("b2", "b", 4000)} {
		s.SetNode(n)
	}
	s.SetTopologySynced()
	return s
}

// fitsInOneRack reports whether n one-CPU pods fit in one rack of the
// snapshot's tree.
func fitsInOneRack(t *testing.T, snap *Snapshot, n int32) bool {
	t.Helper()
	tree := snap.Topologies["f"]
	if tree == nil {
		t.Fatalf("no tree for flavor f; errors: %v", snap.TopologyErrors)
	}
	a, _ := tree.Place(tas.Request{Count: n, PerPod: resources.Requests{corev1.ResourceCPU: 1000}, Required: rackLabel})
	return a != nil
}

func TestTopologyTreeCountsNodesPodsAndAdmissions(t *testing.T) {
	s := newTASTestState(t)
	if !fitsInOneRack(t, s.Snapshot(), 8) {
		t.Fatal("8 one-CPU pods should fit in a rack of two 4-CPU nodes")
	}
	// A pod placed without topology takes 1 CPU on a1, and one on b1.
	s.SetPodUsage(types.NamespacedName{Namespace: "x", Name: "p1"}, "a1", resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: 1})
	s.SetPodUsage(types.NamespacedName{Namespace: "x", Name: "p2"}, "b1", resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: 1})
	if fitsInOneRack(t, s.Snapshot(), 8) {
		t.Fatal("other pods' requests should leave 7 CPUs per rack")
	}
	if !fitsInOneRack(t, s.Snapshot(), 7) {
		t.Fatal("7 pods should still fit in a rack")
	}
	// An admitted workload holds 3 pods on rack b.
	a := admitted("w", "cq", 3000)
	a.Topology = []TopologyUse{{Flavor: "f", PerPod: resources.Requests{corev1.ResourceCPU: 1000},
		Assignment: tas.Encode([]string{rackLabel}, []tas.Domain{{Values: []string{"b"}, Count: 3}})}}
	if err := s.Assume(a); err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if !fitsInOneRack(t, snap, 7) {
		t.Fatal("rack a still has 7 free CPUs")
	}
	s.DeletePodUsage(types.NamespacedName{Namespace: "x", Name: "p1"})
	if !fitsInOneRack(t, s.Snapshot(), 8) {
		t.Fatal("the pod on a1 ended: rack a has 8 free CPUs")
	}
	if fitsInOneRack(t, snap, 8) {
		t.Fatal("an earlier snapshot's tree must not change")
	}
	s.Forget(a.Key)
	s.SetPodUsage(types.NamespacedName{Namespace: "x", Name: "p2"}, "", nil) // ended
	if !fitsInOneRack(t, s.Snapshot(), 8) {
		t.Fatal("everything released")
	}
}

func TestTopologyTreeSkipsUnusableNodes(t *testing.T) {
	s := newTASTestState(t)
	cordoned := tasNode("a1", "a", 4000)
	cordoned.Schedulable = false
	s.SetNode(cordoned)
	tainted := tasNode("a2", "a", 4000)
	tainted.Taints = []corev1.Taint{{Key: "gpu", Value: "yes", Effect: corev1.TaintEffectNoSchedule}}
	s.SetNode(tainted)
	other := tasNode("b1", "b", 4000)
	other.Labels = map[string]string{rackLabel: "b", "pool": "other"}
	s.SetNode(other)
	snap := s.Snapshot()
	if !fitsInOneRack(t, snap, 1) {
		t.Fatal("b2 is usable")
	}
	if fitsInOneRack(t, snap, 5) {
		t.Fatal("a1 is cordoned and b1 not in the flavor's pool: a rack holds 4 pods at most")
	}
	// a2 stays in the tree, its taint noted: only pods that tolerate it
	// may go there (the scheduling core masks it for the others).
	if got := snap.NodeTaints["f"]["a2"]; len(got) != 1 || got[0].Key != "gpu" {
		t.Fatalf("a2's untolerated taints: %v", snap.NodeTaints)
	}
	s.SetFlavor(&Flavor{Name: "f", NodeLabels: map[string]string{"pool": "tas"}, TopologyName: "topo",
		Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}})
	if got := s.Snapshot().NodeTaints["f"]; len(got) != 0 {
		t.Fatalf("the flavor tolerates the taint: %v", got)
	}
}

func TestTopologyNotListedOrMissing(t *testing.T) {
	s := New()
	s.SetFlavor(&Flavor{Name: "f", TopologyName: "topo"})
	cq := testQueue("cq", "")
	s.SetClusterQueue(cq)
	snap := s.Snapshot()
	if in, ok := snap.ClusterQueueInactive("cq"); !ok || in.Reason != InactiveTopologyNotFound {
		t.Fatalf("a ClusterQueue whose flavor's Topology is missing is inactive with TopologyNotFound, got %+v %v", in, ok)
	}
	if snap.TopologyErrors["f"] == "" || snap.Topologies["f"] != nil {
		t.Fatalf("no tree without the Topology: %v", snap.TopologyErrors)
	}
	s.SetTopology("topo", []string{rackLabel})
	snap = s.Snapshot()
	if _, ok := snap.ClusterQueueInactive("cq"); ok {
		t.Fatal("the Topology exists: the ClusterQueue is active")
	}
	if snap.Topologies["f"] != nil {
		t.Fatal("no capacity before the nodes and pods are listed")
	}
	s.SetTopologySynced()
	if s.Snapshot().Topologies["f"] == nil {
		t.Fatal("a tree once listed")
	}
	if !s.HasTopologyFlavors() {
		t.Fatal("flavor f names a Topology")
	}
}

func TestTolerates(t *testing.T) {
	taint := &corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	cases := []struct {
		tol  corev1.Toleration
		want bool
	}{
		{corev1.Toleration{Key: "k", Value: "v"}, true},
		{corev1.Toleration{Key: "k", Value: "w"}, false},
		{corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Key: "k", Value: "v", Effect: corev1.TaintEffectNoExecute}, false},
		{corev1.Toleration{Key: "k", Operator: "Bogus"}, false},
	}
	for _, c := range cases {
		if got := Tolerates(ptr.To(c.tol), taint); got != c.want {
			t.Errorf("%+v tolerates %+v: got %v, want %v", c.tol, taint, got, c.want)
		}
	}
}

// BenchmarkTopologySnapshot: a snapshot after one admission placed by
// topology, with 1,000 nodes in 10 racks and 500 admitted workloads
// holding topology capacity (the trees are rebuilt from the cached
// node trees, less every holder's pods).
func BenchmarkTopologySnapshot(b *testing.B) {
	s := New()
	s.SetFlavor(&Flavor{Name: "f", NodeLabels: map[string]string{"pool": "tas"}, TopologyName: "topo"})
	s.SetTopology("topo", []string{rackLabel, corev1.LabelHostname})
	for i := range 1000 {
		n := tasNode(fmt.Sprintf("n%04d", i), fmt.Sprintf("r%d", i%10), 96000)
		n.Labels[corev1.LabelHostname] = n.Name
		s.SetNode(n)
	}
	s.SetTopologySynced()
	perPod := resources.Requests{corev1.ResourceCPU: 1000}
	hold := func(i int) *Admitted {
		a := admitted(fmt.Sprintf("w%d", i), "cq", 4000)
		a.Topology = []TopologyUse{{Flavor: "f", PerPod: perPod,
			Assignment: tas.Encode([]string{corev1.LabelHostname}, []tas.Domain{{Values: []string{fmt.Sprintf("n%04d", i%1000)}, Count: 4}})}}
		return a
	}
	for i := range 500 {
		if err := s.Assume(hold(i)); err != nil {
			b.Fatal(err)
		}
	}
	s.Snapshot()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := hold(500 + i)
		if err := s.Assume(a); err != nil {
			b.Fatal(err)
		}
		if s.Snapshot().Topologies["f"] == nil {
			b.Fatal("no tree")
		}
		s.Forget(a.Key)
	}
}

// Trees brought up to date change by change equal trees built from
// scratch, over random admissions, releases and replacements.
func TestTopologyTreesIncrementalMatchRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	s := New()
	s.SetFlavor(&Flavor{Name: "f", NodeLabels: map[string]string{"pool": "tas"}, TopologyName: "topo"})
	s.SetTopology("topo", []string{rackLabel, corev1.LabelHostname})
	var hosts []string
	for i := range 12 {
		n := tasNode(fmt.Sprintf("n%02d", i), fmt.Sprintf("r%d", i%3), 8000)
		n.Labels[corev1.LabelHostname] = n.Name
		hosts = append(hosts, n.Name)
		s.SetNode(n)
	}
	s.SetTopologySynced()
	held := map[string]*Admitted{}
	for step := range 300 {
		name := fmt.Sprintf("w%d", rng.IntN(20))
		a, ok := held[name]
		switch {
		case ok && rng.IntN(3) == 0:
			b := *a
			b.Evicting = true
			if err := s.Replace(&b); err != nil {
				t.Fatal(err)
			}
			held[name] = &b
		case ok:
			s.Forget(a.Key)
			delete(held, name)
		default:
			a = admitted(name, "cq", 1000)
			a.Topology = []TopologyUse{{Flavor: "f", PerPod: resources.Requests{corev1.ResourceCPU: 1000},
				Assignment: tas.Encode([]string{corev1.LabelHostname}, []tas.Domain{{Values: []string{hosts[rng.IntN(len(hosts))]}, Count: int32(1 + rng.IntN(3))}})}}
			if err := s.Assume(a); err != nil {
				t.Fatal(err)
			}
			held[name] = a
		}
		if rng.IntN(3) > 0 {
			continue
		}
		got := s.Snapshot()
		fresh := New()
		fresh.SetFlavor(&Flavor{Name: "f", NodeLabels: map[string]string{"pool": "tas"}, TopologyName: "topo"})
		fresh.SetTopology("topo", []string{rackLabel, corev1.LabelHostname})
		for _, h := range hosts {
			n := tasNode(h, "", 8000)
			n.Labels = s.tas.nodes[h].Labels
			fresh.SetNode(n)
		}
		fresh.SetTopologySynced()
		for _, a := range held {
			if err := fresh.Assume(a); err != nil {
				t.Fatal(err)
			}
		}
		want := fresh.Snapshot()
		if !got.Topologies["f"].Equal(want.Topologies["f"]) {
			t.Fatalf("step %d: the tree kept up to date differs from one built from scratch", step)
		}
		if len(got.TopologyUsers) != len(want.TopologyUsers) {
			t.Fatalf("step %d: %d users, want %d", step, len(got.TopologyUsers), len(want.TopologyUsers))
		}
		for i := range got.TopologyUsers {
			if got.TopologyUsers[i].Key != want.TopologyUsers[i].Key {
				t.Fatalf("step %d: users out of order", step)
			}
		}
	}
}

// A deleted node keeps its labels while an admission places pods on it
// (so they can be moved within its domain), and not once none does; a
// node that comes back has its own.
func TestFailedNodesKeepTheLabelsOfDeletedOnes(t *testing.T) {
	s := newTASTestState(t)
	a := admitted("w", "cq", 2000)
	a.Topology = []TopologyUse{{Flavor: "f", PerPod: resources.Requests{corev1.ResourceCPU: 1000},
		Assignment: tas.Encode([]string{corev1.LabelHostname}, []tas.Domain{{Values: []string{"a1"}, Count: 2}})}}
	if err := s.Assume(a); err != nil {
		t.Fatal(err)
	}
	s.DeleteNode("a1")
	s.DeleteNode("b1")
	got := s.FailedNodes([]string{"a1", "b1"})
	if len(got) != 2 || got[0].Labels[rackLabel] != "a" || got[1].Labels != nil {
		t.Fatalf("want the labels of a1 only (it holds pods), got %v", got)
	}
	back := tasNode("a1", "c", 4000)
	s.SetNode(back)
	if got := s.FailedNodes([]string{"a1"}); got[0].Labels[rackLabel] != "c" {
		t.Fatalf("a1 is back in rack c: %v", got)
	}
	s.DeleteNode("a1")
	s.Forget(a.Key)
	s.DeleteNode("b2")
	if got := s.FailedNodes([]string{"a1"}); got[0].Labels != nil {
		t.Fatalf("no admission places pods on a1 any longer: %v", got)
	}
}

// hostNode is a node in rack whose host name label is host, not its name.
func hostNode(name, rack, host string) *Node {
	n := tasNode(name, rack, 4000)
	n.Labels[corev1.LabelHostname] = host
	return n
}

// A topology assignment names hosts by their host name label, which need
// not be the node's name and may repeat across racks (Kueue's scalability
// runner: node-0 in every rack): the nodes are found by their labels,
// deleted ones by their last labels, and the admissions placing pods on a
// node are those of its own domains.
func TestAssignedNodesAreFoundByTheirLabels(t *testing.T) {
	s := New()
	for _, n := range []*Node{hostNode("node-a-0", "a", "node-0"), hostNode("node-b-0", "b", "node-0"), hostNode("ip-10-0-0-1.internal", "a", "ip-10-0-0-1")} {
		s.SetNode(n)
	}
	s.SetNode(tasNode("plain", "b", 4000)) // no host name label: named by its name
	levels := []string{rackLabel, corev1.LabelHostname}
	every := tas.Encode(levels, []tas.Domain{{Values: []string{"a", "node-0"}, Count: 1}, {Values: []string{"b", "node-0"}, Count: 1},
		{Values: []string{"b", "plain"}, Count: 1}, {Values: []string{"b", "node-9"}, Count: 1}})
	if got := s.AssignedNodes(every); !slices.Equal(got, []string{"node-a-0", "node-b-0", "plain", "node-9"}) {
		t.Errorf("assigned nodes %v, want each domain's node (and the host name of one no node is)", got)
	}
	hostOnly := tas.Encode([]string{corev1.LabelHostname}, []tas.Domain{{Values: []string{"ip-10-0-0-1"}, Count: 2}})
	if got := s.AssignedNodes(hostOnly); !slices.Equal(got, []string{"ip-10-0-0-1.internal"}) {
		t.Errorf("assigned nodes %v, want the node whose host name it is", got)
	}
	if got := s.AssignedNodes(tas.Encode([]string{rackLabel}, []tas.Domain{{Values: []string{"a"}, Count: 2}})); got != nil {
		t.Errorf("a rack-level assignment names nodes: %v", got)
	}

	a := admitted("w", "cq", 2000)
	a.Topology = []TopologyUse{{Flavor: "f", PerPod: resources.Requests{corev1.ResourceCPU: 1000},
		Assignment: tas.Encode(levels, []tas.Domain{{Values: []string{"b", "node-0"}, Count: 2}})}}
	if err := s.Assume(a); err != nil {
		t.Fatal(err)
	}
	if got := s.NodeHolders("node-b-0"); len(got) != 1 {
		t.Errorf("holders of node-b-0: %v, want w", got)
	}
	if got := s.NodeHolders("node-a-0"); len(got) != 0 {
		t.Errorf("holders of node-a-0 (host name node-0 in rack a): %v, want none", got)
	}
	s.DeleteNode("node-b-0")
	if got := s.AssignedNodes(a.Topology[0].Assignment); !slices.Equal(got, []string{"node-b-0"}) {
		t.Errorf("assigned nodes after the deletion %v, want node-b-0 by its last labels", got)
	}
	if got := s.NodeHolders("node-b-0"); len(got) != 1 {
		t.Errorf("holders of the deleted node-b-0: %v, want w", got)
	}
}
