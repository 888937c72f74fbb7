package cache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// A LimitRange whose max a queued workload's container exceeds sets it
// aside (its pods would be refused); removing the LimitRange queues it
// again. Other namespaces' workloads are not touched.
func TestLimitRangeSetsAsideAndRequeues(t *testing.T) {
	c := newTestCache(t, "4")
	c.UpsertWorkload(pendingWL("big", "lq", "1", "2"))
	c.UpsertWorkload(pendingWL("small", "lq", "2", "500m"))
	c.TakeRevisits()
	big, small := types.NamespacedName{Namespace: "ns", Name: "big"}, types.NamespacedName{Namespace: "ns", Name: "small"}

	c.SetLimitRange("other", "lr", corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
		Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}})
	if p, _ := c.Placement(big); p != lifecycle.Queued {
		t.Fatalf("another namespace's LimitRange placed the workload %s, want Queued", p)
	}
	drainWake(c)
	c.SetLimitRange("ns", "lr", corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
		Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}})
	if p, _ := c.Placement(big); p != lifecycle.Aside {
		t.Fatalf("workload above the max is %s, want Aside", p)
	}
	if p, _ := c.Placement(small); p != lifecycle.Queued {
		t.Fatalf("workload within the max is %s, want Queued", p)
	}
	if got := c.TakeRevisits(); len(got) != 1 || got[0] != big {
		t.Fatalf("revisits %v, want [%v]", got, big)
	}
	if v := c.View(pendingWL("x", "lq", "3", "1")); v.LimitRanges == nil || v.LimitRanges.Container == nil {
		t.Fatalf("the view lacks the namespace's bounds: %+v", v.LimitRanges)
	}

	drainWake(c)
	c.DeleteLimitRange("ns", "lr")
	if _, queued := c.Pending(big); !queued {
		t.Fatal("removing the LimitRange must queue the workload again")
	}
	if !woken(c) {
		t.Error("the scheduler was not woken for the workload queued again")
	}
	if v := c.View(pendingWL("x", "lq", "3", "1")); v.LimitRanges != nil {
		t.Errorf("the view still has bounds after the LimitRange went: %+v", v.LimitRanges)
	}
}
