package cache

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
)

// placedWL is admittedWL with pods of 2 cpus, one on each named node, and
// a required rack.
func placedWL(name string, nodes ...string) *kueue.Workload {
	wl := withPods(admittedWL(name, "lq", "1", "cq", "2"), int32(len(nodes)))
	wl.Spec.PodSets[0].TopologyRequest = &kueue.PodSetTopologyRequest{Required: ptr.To("rack")}
	psa := &wl.Status.Admission.PodSetAssignments[0]
	psa.ResourceUsage = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(2*len(nodes)), resource.DecimalSI)}
	var domains []tas.Domain
	for _, n := range nodes {
		domains = append(domains, tas.Domain{Values: []string{n}, Count: 1})
	}
	psa.TopologyAssignment = tas.Encode([]string{corev1.LabelHostname}, domains)
	return wl
}

// The pods of a failed node go to another node of their rack, and the
// replacement is assumed until written; Refresh undoes it.
func TestReplaceNodes(t *testing.T) {
	c := newTestCache(t, "100")
	c.SetFlavor(&state.Flavor{Name: "f", TopologyName: "topo"})
	c.SetTopology("topo", []string{"rack", corev1.LabelHostname})
	for name, rack := range map[string]string{"a1": "a", "a2": "a", "b1": "b"} {
		c.SetNode(&state.Node{Name: name, Schedulable: true,
			Labels:      map[string]string{"rack": rack, corev1.LabelHostname: name},
			Allocatable: resources.Requests{corev1.ResourceCPU: 4 * resources.One, corev1.ResourcePods: 110}})
	}
	c.MarkTopologySynced()
	c.UpsertWorkload(placedWL("w", "a1", "a2"))

	adm, why := c.ReplaceNodes(key("w"), []string{"a1"})
	if adm == nil {
		t.Fatalf("no replacement: %s", why)
	}
	if got := tas.Nodes(adm.PodSetAssignments[0].TopologyAssignment); len(got) != 1 || got[0] != "a2" {
		t.Fatalf("replaced onto %v, want a2 (the rack's other node)", got)
	}
	assumed := func() []string {
		a, _ := c.state.Admitted(key("w"))
		return tas.Nodes(a.Topology[0].Assignment)
	}
	if got := assumed(); len(got) != 1 || got[0] != "a2" {
		t.Fatalf("the cache holds %v, want the replacement assumed", got)
	}
	c.Refresh(key("w"))
	if got := assumed(); len(got) != 2 {
		t.Fatalf("after Refresh the cache holds %v, want a1 and a2 again", got)
	}

	if adm, why := c.ReplaceNodes(key("w"), []string{"b1"}); adm != nil || why == "" {
		t.Errorf("a node the workload does not use: %v %q", adm, why)
	}
	c.UpsertWorkload(placedWL("other", "b1", "b1"))
	if adm, why := c.ReplaceNodes(key("w"), []string{"a1", "a2"}); adm != nil || why == "" {
		t.Errorf("both nodes of the rack failed and rack b is full: %v %q", adm, why)
	}
}

// runnerWL is admittedWL with pods of 2 cpus placed, a pod per domain, on
// the nodes of Kueue's scalability runner: assignments keep every level
// (block, rack, host name), as host names repeat in every rack.
func runnerWL(name string, domains ...[]string) *kueue.Workload {
	wl := withPods(admittedWL(name, "lq", "1", "cq", "2"), int32(len(domains)))
	wl.Spec.PodSets[0].TopologyRequest = &kueue.PodSetTopologyRequest{Required: ptr.To(runnerRack)}
	psa := &wl.Status.Admission.PodSetAssignments[0]
	psa.ResourceUsage = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(2*len(domains)), resource.DecimalSI)}
	var ds []tas.Domain
	for _, d := range domains {
		ds = append(ds, tas.Domain{Values: d, Count: 1})
	}
	psa.TopologyAssignment = tas.Encode(runnerLevels, ds)
	return wl
}

const (
	runnerBlock = "cloud.provider.com/topology-block"
	runnerRack  = "cloud.provider.com/topology-rack"
)

var runnerLevels = []string{runnerBlock, runnerRack, corev1.LabelHostname}

// runnerCache holds the nodes as Kueue's scalability runner makes them
// (configs/tas/generator.yaml, before Kueue made host names unique): node
// node-b0-r<rack>-n<i> is labelled rack-<rack> and host name node-<i>, so
// that node-0 and node-1 are host names in each of racks 0 and 1, and no
// node is named so.
func runnerCache(t *testing.T) *Cache {
	t.Helper()
	c := newTestCache(t, "100")
	c.SetFlavor(&state.Flavor{Name: "f", TopologyName: "topo"})
	c.SetTopology("topo", runnerLevels)
	for _, r := range []string{"0", "1"} {
		for _, i := range []string{"0", "1"} {
			c.SetNode(runnerNode(r, i, true))
		}
	}
	c.MarkTopologySynced()
	return c
}

func runnerNode(rack, i string, ready bool) *state.Node {
	return &state.Node{Name: "node-b0-r" + rack + "-n" + i, Schedulable: ready, Ready: ready,
		Labels:      map[string]string{runnerBlock: "block-0", runnerRack: "rack-" + rack, corev1.LabelHostname: "node-" + i},
		Allocatable: resources.Requests{corev1.ResourceCPU: 4 * resources.One, corev1.ResourcePods: 110}}
}

// A workload placed on nodes whose host names are not their names (and
// repeat across racks) runs on: every node it is on is found, by its
// labels, so none is taken for gone. A node that fails is the one of its
// rack only, and its pods are replaced within that rack.
func TestNodesNamedApartFromTheirHostNames(t *testing.T) {
	c := runnerCache(t)
	wl := runnerWL("w", []string{"block-0", "rack-1", "node-0"}, []string{"block-0", "rack-1", "node-1"})
	c.UpsertWorkload(wl)
	v := c.View(wl)
	if len(v.Nodes) != 2 || v.Nodes["node-b0-r1-n0"].Node == nil || v.Nodes["node-b0-r1-n1"].Node == nil {
		t.Fatalf("the nodes checked are %v, want node-b0-r1-n0 and node-b0-r1-n1, both known", v.Nodes)
	}
	if s := lifecycle.Next(wl, &v, &lifecycle.Options{ReplaceFailedNodes: true}, time.Now()); s.Reason == kueue.WorkloadEvictedByNodeFailures {
		t.Fatalf("a workload on healthy nodes gets %v: %s", s.Action, s.Message)
	}

	c.TakeRevisits()
	c.SetNode(runnerNode("0", "0", false)) // node-0 of the other rack
	if got := c.TakeRevisits(); len(got) != 0 {
		t.Errorf("revisits %v: the node that failed is in rack 0, the workload in rack 1", got)
	}
	c.DeleteNode("node-b0-r1-n0")
	if got := c.TakeRevisits(); !slices.Contains(got, key("w")) {
		t.Errorf("revisits %v: a node of the workload was deleted", got)
	}
	v = c.View(wl)
	s := lifecycle.Next(wl, &v, &lifecycle.Options{ReplaceFailedNodes: true}, time.Now())
	if s.Action != lifecycle.ReplaceNodes || !slices.Equal(s.Nodes, []string{"node-b0-r1-n0"}) {
		t.Fatalf("after the deletion: %v on %v (%s), want node-b0-r1-n0 replaced", s.Action, s.Nodes, s.Message)
	}
	adm, why := c.ReplaceNodes(key("w"), s.Nodes)
	if adm == nil {
		t.Fatalf("no replacement: %s", why)
	}
	domains, err := tas.Domains(adm.PodSetAssignments[0].TopologyAssignment)
	if err != nil || len(domains) != 1 || !slices.Equal(domains[0].Values, []string{"block-0", "rack-1", "node-1"}) || domains[0].Count != 2 {
		t.Fatalf("replaced onto %+v (%v), want both pods on rack 1's other node", domains, err)
	}
}
