package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
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
			Allocatable: resources.Requests{corev1.ResourceCPU: 4 * resources.One, corev1.ResourcePods: 110 * resources.One}})
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
