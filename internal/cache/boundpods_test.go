package cache

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// The view of a workload placed on nodes counts its pods bound to each,
// once they were listed; its last running pod there ending, or the node's
// readiness changing, brings it back to the workload controller.
func TestBoundPodsReachTheNodeChecks(t *testing.T) {
	c := newTestCache(t, "100")
	c.SetFlavor(&state.Flavor{Name: "f", TopologyName: "topo"})
	c.SetTopology("topo", []string{"rack", corev1.LabelHostname})
	for _, name := range []string{"a1", "a2"} {
		c.SetNode(&state.Node{Name: name, Schedulable: true, Ready: true, Labels: map[string]string{"rack": "a", corev1.LabelHostname: name}})
	}
	c.MarkTopologySynced()
	wl := placedWL("w", "a1", "a2")
	c.UpsertWorkload(wl)
	pod := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }
	c.SetBoundPod(pod("p1"), key("w"), "a1", PodRunning)
	c.SetBoundPod(pod("p2"), key("w"), "a2", PodRunning)
	if got := c.View(wl).Nodes["a1"].Pods; got != nil {
		t.Fatalf("pods counted before they were listed: %+v", got)
	}
	c.MarkBoundPodsSynced()
	c.TakeRevisits()
	if got := c.View(wl).Nodes["a1"].Pods; got == nil || *got != (lifecycle.NodePods{Running: 1}) {
		t.Fatalf("a1: %+v, want one running pod", got)
	}

	c.SetBoundPod(pod("p1"), key("w"), "a1", PodEnded)
	if got := c.View(wl).Nodes["a1"].Pods; got == nil || *got != (lifecycle.NodePods{Ended: 1}) {
		t.Fatalf("a1 after its pod failed: %+v, want one ended", got)
	}
	if got := c.TakeRevisits(); !slices.Contains(got, key("w")) {
		t.Errorf("revisits %v: the workload's last pod on a1 ended", got)
	}
	c.DeleteBoundPod(pod("p1"))
	if got := c.View(wl).Nodes["a1"].Pods; got == nil || *got != (lifecycle.NodePods{}) {
		t.Fatalf("a1 after its pod was deleted: %+v, want nothing", got)
	}
	if got := c.View(wl).Nodes["a2"].Pods; got == nil || got.Running != 1 {
		t.Fatalf("a2: %+v, want its pod running still", got)
	}

	c.SetNode(&state.Node{Name: "a2", Labels: map[string]string{"rack": "a", corev1.LabelHostname: "a2"}})
	if got := c.TakeRevisits(); !slices.Contains(got, key("w")) {
		t.Errorf("revisits %v: node a2 is no longer ready", got)
	}
}
