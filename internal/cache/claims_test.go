package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// A workload claiming a ResourceClaimTemplate that does not exist yet is
// set aside; the template's arrival queues it, charged its devices; the
// template's deletion sets it aside again. Other namespaces' templates do
// not count.
func TestClaimTemplatesPlaceTheirNamespace(t *testing.T) {
	c := New(lifecycle.Options{DeviceClasses: map[string]corev1.ResourceName{"gpu.example.com": "example.com/gpu"}})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	c.SetClusterQueue(clusterQueue(t, "cq", "", "4"))
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq", kueue.None)
	wl := pendingWL("w", "lq", "1", "1")
	wl.Spec.PodSets[0].Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("two-gpus")}}
	c.UpsertWorkload(wl)
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	if p, _ := c.Placement(key); p != lifecycle.Aside {
		t.Fatalf("workload with a missing template is %s, want Aside", p)
	}
	two := &lifecycle.ClaimTemplate{Requests: []lifecycle.DeviceRequest{{Name: "g", Class: "gpu.example.com", Count: 2}}}
	c.SetClaimTemplate("other", "two-gpus", two)
	if p, _ := c.Placement(key); p != lifecycle.Aside {
		t.Fatalf("another namespace's template placed the workload %s", p)
	}
	c.TakeRevisits()
	c.SetClaimTemplate("ns", "two-gpus", two)
	info, queued := c.Pending(key)
	if !queued {
		t.Fatal("the template's arrival did not queue the workload")
	}
	if got := info.Shape.PodSets[0].PerPod["example.com/gpu"]; got != 2 {
		t.Errorf("charged %d milli example.com/gpu per pod, want 2000", got)
	}
	if got := c.TakeRevisits(); len(got) != 1 || got[0] != key {
		t.Errorf("revisits %v, want the workload (its pending message must change)", got)
	}
	c.DeleteClaimTemplate("ns", "two-gpus")
	if p, _ := c.Placement(key); p != lifecycle.Aside {
		t.Errorf("after the template's deletion the workload is %s, want Aside", p)
	}
}
