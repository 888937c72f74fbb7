package cache

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
)

// withPods sets a Workload's count and, when admitted, its admission to n
// pods of 1 cpu.
func withPods(wl *kueue.Workload, n int32) *kueue.Workload {
	wl.Spec.PodSets[0].Count = n
	if adm := wl.Status.Admission; adm != nil {
		adm.PodSetAssignments[0].Count = ptr.To(n)
		adm.PodSetAssignments[0].ResourceUsage = corev1.ResourceList{corev1.ResourceCPU: *resource.NewQuantity(int64(n), resource.DecimalSI)}
	}
	return wl
}

// A growing elastic job's slice waits for the pods it adds only, pinned to
// the running slice's flavor. Once its admission is assumed the running
// slice holds nothing (the job's quota counts once); a forgotten admission
// gives the running slice its quota back; and the running slice's later
// updates, until its Finished condition, do not count it again.
func TestGrowingSliceTakesOverTheRunningSlicesQuota(t *testing.T) {
	c := newTestCache(t, "8")
	old := withPods(admittedWL("old", "lq", "1", "cq", "1"), 2)
	c.UpsertWorkload(old)
	next := withPods(pendingWL("next", "lq", "2", "1"), 5)
	next.Annotations = map[string]string{kueue.WorkloadSliceReplacementForAnnotation: "ns/old", kueue.ElasticJobAnnotation: "true"}
	c.UpsertWorkload(next)

	info, ok := c.Pending(key("next"))
	if !ok || info.Replaces == nil {
		t.Fatalf("the slice is queued as %+v, want a replacement", info)
	}
	if got := info.Shape.PodSets[0].Count; got != 3 {
		t.Errorf("the slice asks for %d pods, want the 3 it adds", got)
	}
	if got := info.Replaces.Flavors[0][corev1.ResourceCPU]; got != "f" || info.Replaces.Counts[0] != 5 {
		t.Errorf("replacement %+v, want 5 pods pinned to flavor f", info.Replaces)
	}

	whole := func(name string) *state.Admitted {
		return &state.Admitted{Key: key(name), UID: types.UID("uid-" + name), ClusterQueue: "cq", LocalQueue: "lq",
			Usage: resources.FlavorResourceQuantities{{Flavor: "f", Resource: corev1.ResourceCPU}: 5000}}
	}
	if err := c.Assume(whole("next"), "2"); err != nil {
		t.Fatal(err)
	}
	if held := c.heldCPU(); held != 5000 {
		t.Fatalf("%d millicpu held after the assumption, want 5000 (the job once)", held)
	}
	c.Forget(key("next"))
	if held := c.heldCPU(); held != 2000 {
		t.Fatalf("%d millicpu held after the admission was forgotten, want the running slice's 2000", held)
	}
	if info, ok := c.Pending(key("next")); !ok || info.Shape.PodSets[0].Count != 3 {
		t.Fatalf("the slice is not queued again for the pods it adds: %+v", info)
	}

	if err := c.Assume(whole("next"), "2"); err != nil {
		t.Fatal(err)
	}
	admitted := withPods(admittedWL("next", "lq", "3", "cq", "1"), 5)
	admitted.Annotations = next.Annotations
	c.UpsertWorkload(admitted)
	touched := old.DeepCopy()
	touched.ResourceVersion = "4"
	touched.Status.Conditions = append(touched.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: "Started"})
	c.UpsertWorkload(touched)
	if held := c.heldCPU(); held != 5000 {
		t.Fatalf("%d millicpu held after the replaced slice changed, want 5000", held)
	}
	finished := touched.DeepCopy()
	finished.ResourceVersion = "5"
	finished.Status.Conditions = append(finished.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadSliceReplaced})
	c.UpsertWorkload(finished)
	if held := c.heldCPU(); held != 5000 {
		t.Fatalf("%d millicpu held once the replaced slice finished, want 5000", held)
	}
	if len(c.replacers) != 0 {
		t.Errorf("slice links left behind: %v", c.replacers)
	}
}

func key(name string) types.NamespacedName { return types.NamespacedName{Namespace: "ns", Name: name} }

// heldCPU sums the cpu the cache's reservations hold.
func (c *Cache) heldCPU() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var total int64
	for _, name := range []string{"old", "next"} {
		if a, ok := c.state.Admitted(key(name)); ok {
			total += int64(a.Usage[resources.FlavorResource{Flavor: "f", Resource: corev1.ResourceCPU}])
		}
	}
	return total
}

// Under admission fair sharing a growing slice's admission charges its
// LocalQueue for the pods it adds, not for the job's whole size; a
// forgotten admission takes that back.
func TestGrowingSliceChargesWhatItAdds(t *testing.T) {
	c := newFairCache(t)
	old := withPods(admittedWL("old", "lq-a", "1", "cq", "1"), 2)
	c.UpsertWorkload(old)
	next := withPods(pendingWL("next", "lq-a", "2", "1"), 5)
	next.Annotations = map[string]string{kueue.WorkloadSliceReplacementForAnnotation: "ns/old", kueue.ElasticJobAnnotation: "true"}
	c.UpsertWorkload(next)
	c.UpsertWorkload(pendingWL("plain", "lq-b", "3", "3"))
	penalty := func(lq kueue.LocalQueueName) float64 {
		l := c.fair.ledgers[LocalQueueKey{Namespace: "ns", Name: lq}]
		if l == nil {
			return 0
		}
		return l.Penalty[corev1.ResourceCPU]
	}
	usage := func(cpu int64) resources.FlavorResourceQuantities {
		return resources.FlavorResourceQuantities{{Flavor: "f", Resource: corev1.ResourceCPU}: cpu}
	}
	if err := c.Assume(&state.Admitted{Key: key("plain"), UID: "uid-plain", ClusterQueue: "cq", LocalQueue: "lq-b", Usage: usage(3000)}, "3"); err != nil {
		t.Fatal(err)
	}
	if err := c.Assume(&state.Admitted{Key: key("next"), UID: "uid-next", ClusterQueue: "cq", LocalQueue: "lq-a", Usage: usage(5000)}, "2"); err != nil {
		t.Fatal(err)
	}
	if a, b := penalty("lq-a"), penalty("lq-b"); b == 0 || a < b*0.999 || a > b*1.001 {
		t.Fatalf("penalty of the slice growing 2 -> 5 cpu: %v; want that of a 3-cpu admission, %v", a, b)
	}
	c.Forget(key("next"))
	if a := penalty("lq-a"); a != 0 {
		t.Errorf("penalty %v after the slice's admission was forgotten, want none", a)
	}
}
