package queueing

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/workload"
)

func shapeOf(cpu int64) *workload.Shape {
	return workload.NewShape([]workload.PodSetShape{{Name: "main", Count: 1,
		PerPod: resources.Requests{corev1.ResourceCPU: cpu * 1000, corev1.ResourcePods: 1000}}})
}

func info(name string, prio int32, t int64, cpu int64) *workload.Info {
	return &workload.Info{Key: types.NamespacedName{Namespace: "ns", Name: name}, UID: types.UID(name),
		LocalQueue: "lq", Priority: prio, QueueOrderTime: t, Shape: shapeOf(cpu)}
}

func names(qs []workload.Queue) map[kueue.ClusterQueueReference][]string {
	out := map[kueue.ClusterQueueReference][]string{}
	for _, q := range qs {
		for _, w := range q.Workloads {
			out[q.ClusterQueue] = append(out[q.ClusterQueue], w.Key.Name)
		}
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func newManager() *Manager {
	m := NewManager()
	m.SetClusterQueue("cq", kueue.BestEffortFIFO)
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq")
	return m
}

func TestQueueOrderIsPriorityThenTimeThenUID(t *testing.T) {
	m := newManager()
	m.AddOrUpdate(info("late-low", 0, 30, 1))
	m.AddOrUpdate(info("b-early", 0, 10, 1))
	m.AddOrUpdate(info("high", 5, 50, 1))
	m.AddOrUpdate(info("a-early", 0, 10, 1))
	got := names(m.Candidates(100))["cq"]
	want := []string{"high", "a-early", "b-early", "late-low"}
	if !equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestWorkloadWaitsUntilItsQueuesExist(t *testing.T) {
	m := NewManager()
	m.AddOrUpdate(info("w", 0, 1, 1))
	if len(m.Candidates(10)) != 0 {
		t.Fatal("a workload without a known LocalQueue must not be a candidate")
	}
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq")
	m.SetClusterQueue("cq", kueue.BestEffortFIFO)
	if got := names(m.Candidates(10))["cq"]; !equal(got, []string{"w"}) {
		t.Fatalf("after the queues appear: %v", got)
	}
	if m.Pending("cq") != 1 || m.PendingInLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}) != 1 {
		t.Fatal("pending counts must include the workload")
	}
}

func TestParkedShapeComesBackWhenCapacityGrows(t *testing.T) {
	m := newManager()
	m.AddOrUpdate(info("big-1", 0, 1, 8))
	m.AddOrUpdate(info("big-2", 0, 2, 8))
	m.AddOrUpdate(info("small", 0, 3, 1))
	m.Candidates(10) // a cycle decides them all
	big, _ := m.Get(types.NamespacedName{Namespace: "ns", Name: "big-1"})
	m.ParkShape("cq", big.Shape)
	if got := names(m.Candidates(10))["cq"]; !equal(got, []string{"small"}) {
		t.Fatalf("with the big shape parked: %v", got)
	}
	if !m.Parked(types.NamespacedName{Namespace: "ns", Name: "big-2"}) {
		t.Fatal("every workload of a parked shape is parked")
	}
	// A new workload of the parked shape is decided once (so that it is
	// told why it waits), then parked with its shape.
	m.AddOrUpdate(info("big-3", 0, 4, 8))
	if got := names(m.Candidates(10))["cq"]; !equal(got, []string{"small", "big-3"}) {
		t.Fatalf("a new member of a parked shape, first cycle: %v", got)
	}
	if got := names(m.Candidates(10))["cq"]; !equal(got, []string{"small"}) {
		t.Fatalf("a new member of a parked shape, next cycle: %v", got)
	}
	m.Unpark("cq")
	if got := names(m.Candidates(10))["cq"]; !equal(got, []string{"big-1", "big-2", "small", "big-3"}) {
		t.Fatalf("after unparking: %v", got)
	}
}

func TestStrictFIFOKeepsItsHead(t *testing.T) {
	m := NewManager()
	m.SetClusterQueue("cq", kueue.StrictFIFO)
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq")
	m.AddOrUpdate(info("head", 0, 1, 8))
	head, _ := m.Get(types.NamespacedName{Namespace: "ns", Name: "head"})
	m.ParkShape("cq", head.Shape)
	if got := names(m.Candidates(10))["cq"]; !equal(got, []string{"head"}) {
		t.Fatalf("a StrictFIFO head must stay a candidate: %v", got)
	}
}

func TestParkedWorkloadAndUnparkAll(t *testing.T) {
	m := newManager()
	m.AddOrUpdate(info("w", 0, 1, 1))
	m.ParkWorkload(types.NamespacedName{Namespace: "ns", Name: "w"})
	if len(m.Candidates(10)) != 0 {
		t.Fatal("a parked workload is no candidate")
	}
	m.UnparkAll()
	if len(m.Candidates(10)) != 1 {
		t.Fatal("UnparkAll must release it")
	}
}

func TestBackoffDelaysCandidate(t *testing.T) {
	m := newManager()
	w := info("w", 0, 1, 1)
	w.RequeueAt = 100
	m.AddOrUpdate(w)
	if len(m.Candidates(50)) != 0 {
		t.Fatal("a workload in backoff is no candidate")
	}
	if next := m.NextRequeueAt(50); next != 100 {
		t.Fatalf("NextRequeueAt = %d, want 100", next)
	}
	if len(m.Candidates(100)) != 1 {
		t.Fatal("the workload is a candidate once requeueAt passes")
	}
	if next := m.NextRequeueAt(100); next != 0 {
		t.Fatalf("NextRequeueAt after backoff = %d, want 0", next)
	}
}

func TestDeleteUpdateAndMoveBetweenQueues(t *testing.T) {
	m := newManager()
	m.SetClusterQueue("other", kueue.BestEffortFIFO)
	for i, n := range []string{"a", "b", "c"} {
		m.AddOrUpdate(info(n, 0, int64(i), 1))
	}
	m.Delete(types.NamespacedName{Namespace: "ns", Name: "b"})
	updated := info("a", 0, 10, 1) // re-queued later: moves behind c
	m.AddOrUpdate(updated)
	if got := names(m.Candidates(20))["cq"]; !equal(got, []string{"c", "a"}) {
		t.Fatalf("after delete and update: %v", got)
	}
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "other")
	got := names(m.Candidates(20))
	if len(got["cq"]) != 0 || !equal(got["other"], []string{"c", "a"}) {
		t.Fatalf("after moving the LocalQueue: %v", got)
	}
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq")
	if got := names(m.Candidates(20))["cq"]; !equal(got, []string{"c", "a"}) {
		t.Fatalf("after moving back: %v (duplicates would show here)", got)
	}
	if m.Pending("cq") != 2 || m.Pending("other") != 0 {
		t.Fatalf("pending counts: cq %d other %d", m.Pending("cq"), m.Pending("other"))
	}
}

func TestIdenticalWorkloadsShareAShape(t *testing.T) {
	m := newManager()
	for i := range 100 {
		m.AddOrUpdate(info(string(rune('a'+i%26))+string(rune('a'+i/26)), 0, int64(i), 2))
	}
	if m.Shapes() != 1 {
		t.Fatalf("100 identical workloads hold %d shapes, want 1", m.Shapes())
	}
}

func TestPendingSummarySplitsParkedWorkloads(t *testing.T) {
	m := newManager()
	m.AddOrUpdate(info("big-1", 0, 1, 8))
	m.AddOrUpdate(info("big-2", 0, 2, 8))
	m.AddOrUpdate(info("small-1", 0, 3, 1))
	m.AddOrUpdate(info("small-2", 0, 4, 1))
	m.AddOrUpdate(info("odd", 0, 5, 2))
	big, _ := m.Get(types.NamespacedName{Namespace: "ns", Name: "big-1"})
	m.ParkShape("cq", big.Shape)
	m.ParkWorkload(types.NamespacedName{Namespace: "ns", Name: "odd"})
	got := m.PendingSummary()["cq"]
	want := PendingCounts{Active: 2, Inadmissible: 3, ActiveShapes: 1, InadmissibleShapes: 2}
	if got != want {
		t.Fatalf("summary = %+v, want %+v", got, want)
	}
	m.UnparkAll()
	got = m.PendingSummary()["cq"]
	want = PendingCounts{Active: 5, ActiveShapes: 3}
	if got != want {
		t.Fatalf("after unparking: %+v, want %+v", got, want)
	}
}

// The workloads behind a StrictFIFO head are told once that they wait for
// it: again only when the head changes, when they change, or when their
// note could not be written.
func TestBlockedWorkloadsAreToldOnce(t *testing.T) {
	m := NewManager()
	m.SetClusterQueue("cq", kueue.StrictFIFO)
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq")
	for i, name := range []string{"head", "b", "c"} {
		m.AddOrUpdate(info(name, 0, int64(i), 1))
	}
	blocked := func() []string {
		qs := m.Candidates(100)
		if len(qs) != 1 {
			t.Fatalf("candidates: %v", names(qs))
		}
		ws := qs[0].Workloads
		var out []string
		for _, w := range m.Blocked("cq", ws[0].Key, ws[1:]) {
			out = append(out, w.Key.Name)
		}
		return out
	}
	check := func(step string, want ...string) {
		t.Helper()
		if got := blocked(); !equal(got, want) {
			t.Errorf("%s: told %v, want %v", step, got, want)
		}
	}
	check("first cycle", "b", "c")
	check("nothing changed")
	m.AddOrUpdate(info("d", 0, 10, 1))
	check("a new workload", "d")
	changed := info("c", 0, 2, 1)
	changed.ResourceVersion = "2"
	m.AddOrUpdate(changed)
	check("a new version", "c")
	m.Untold(types.NamespacedName{Namespace: "ns", Name: "b"})
	check("a note not written", "b")
	check("nothing changed again")
	m.Delete(types.NamespacedName{Namespace: "ns", Name: "head"})
	check("a new head", "c", "d")
	if got := m.Blocked("cq", types.NamespacedName{Namespace: "ns", Name: "b"}, []*workload.Info{info("c", 0, 2, 1)}); len(got) != 0 {
		t.Errorf("a copy of a told workload told again: %v", got)
	}
}

// A hold outlives the workload leaving its queue on admission (the
// admission may be undone), but not the workload being gone: one created
// again under the same name is a candidate at once.
func TestForgottenWorkloadLosesItsHold(t *testing.T) {
	m := newManager()
	m.AddOrUpdate(info("w", 0, 10, 1))
	m.HoldBack(types.NamespacedName{Namespace: "ns", Name: "w"}, 1000)
	m.Delete(types.NamespacedName{Namespace: "ns", Name: "w"})
	m.AddOrUpdate(info("w", 0, 10, 1))
	if got := names(m.Candidates(100))["cq"]; len(got) != 0 {
		t.Fatalf("candidates %v: the hold went with the admission", got)
	}
	m.Forget(types.NamespacedName{Namespace: "ns", Name: "w"})
	again := info("w", 0, 20, 1)
	again.UID = "w-again"
	m.AddOrUpdate(again)
	if got := names(m.Candidates(100))["cq"]; !equal(got, []string{"w"}) {
		t.Fatalf("candidates %v, want the workload created again", got)
	}
	if next := m.NextRequeueAt(100); next != 0 {
		t.Fatalf("a hold at %d is left after the workload was forgotten", next)
	}
}
