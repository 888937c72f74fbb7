package cache

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/state"
)

// After a restart the workload controller may look at a workload placed by
// topology before the nodes are listed: it sees no nodes then, and the
// listing itself changes no node it knew. Listing the nodes, and listing
// the pods placed by topology, bring such workloads back, so that a node
// that failed while no manager ran (here a2, deleted) is noticed; other
// workloads are left alone.
func TestListingNodesRevisitsTopologyWorkloads(t *testing.T) {
	c := newTestCache(t, "100")
	c.SetFlavor(&state.Flavor{Name: "f", TopologyName: "topo"})
	c.SetTopology("topo", []string{"rack", corev1.LabelHostname})
	placed := placedWL("placed", "a1", "a2")
	c.UpsertWorkload(placed)
	plain := admittedWL("plain", "lq", "1", "cq", "1")
	c.UpsertWorkload(plain)
	c.SetNode(&state.Node{Name: "a1", Schedulable: true, Ready: true, Labels: map[string]string{"rack": "a", corev1.LabelHostname: "a1"}})
	c.TakeRevisits()
	if v := c.View(placed); v.Nodes != nil {
		t.Fatalf("nodes checked before they were listed: %+v", v.Nodes)
	}

	c.MarkTopologySynced()
	if got := c.TakeRevisits(); !slices.Equal(got, []Key{key("placed")}) {
		t.Errorf("revisits after the nodes were listed: %v, want the workload placed by topology only", got)
	}
	if v := c.View(placed); v.Nodes["a2"].Node != nil || v.Nodes["a1"].Node == nil {
		t.Errorf("node checks %+v, want a1 known and a2 gone", v.Nodes)
	}

	c.MarkBoundPodsSynced()
	if got := c.TakeRevisits(); !slices.Equal(got, []Key{key("placed")}) {
		t.Errorf("revisits after the pods placed by topology were listed: %v, want the workload placed by topology only", got)
	}
}
