package cache

import (
	"fmt"
	"time"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// A new version of a workload that changes nothing the scheduler reads (a
// status write, the scheduler's own pending note included) neither wakes
// the scheduler nor unparks anything.
func TestStatusOnlyWorkloadUpdateIsQuiet(t *testing.T) {
	c := newTestCache(t, "4")
	c.UpsertWorkload(pendingWL("a", "lq", "1", "8"))
	if !woken(c) {
		t.Fatal("a new workload must wake the scheduler")
	}
	info, _ := c.Pending(types.NamespacedName{Namespace: "ns", Name: "a"})
	c.Park("cq", info.Shape, nil)
	unparks := c.Unparks()
	noted := pendingWL("a", "lq", "2", "8")
	noted.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "WaitingForQuota"}}
	for i := range 100 {
		noted.ResourceVersion = string(rune('a' + i%26))
		c.UpsertWorkload(noted.DeepCopy())
	}
	if woken(c) {
		t.Fatal("status-only updates woke the scheduler")
	}
	if c.Unparks() != unparks {
		t.Fatalf("status-only updates unparked %d times", c.Unparks()-unparks)
	}
	if got, _ := c.Pending(types.NamespacedName{Namespace: "ns", Name: "a"}); got.ResourceVersion != noted.ResourceVersion {
		t.Fatalf("the queued entry keeps version %s, want the latest %s", got.ResourceVersion, noted.ResourceVersion)
	}
}

// Stopping a LocalQueue sets its pending workloads aside and asks for them
// to be revisited; resuming it queues them again. Workloads of other
// LocalQueues are not touched.
func TestLocalQueueStopMovesOnlyItsWorkloads(t *testing.T) {
	c := newTestCache(t, "4")
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "other"}, "cq", kueue.None)
	c.UpsertWorkload(pendingWL("a", "lq", "1", "1"))
	c.UpsertWorkload(pendingWL("b", "other", "2", "1"))
	c.TakeRevisits()
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq", kueue.Hold)
	if p, _ := c.Placement(types.NamespacedName{Namespace: "ns", Name: "a"}); p != lifecycle.Aside {
		t.Fatalf("workload of the stopped queue is %s, want Aside", p)
	}
	if p, _ := c.Placement(types.NamespacedName{Namespace: "ns", Name: "b"}); p != lifecycle.Queued {
		t.Fatalf("workload of the running queue is %s, want Queued", p)
	}
	if got := c.TakeRevisits(); len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("revisits %v, want [a]", got)
	}
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq", kueue.None)
	if _, queued := c.Pending(types.NamespacedName{Namespace: "ns", Name: "a"}); !queued {
		t.Fatal("resuming the LocalQueue must queue its workload again")
	}
}

// The example: a cohort of cq-a and cq-b, 10 cpu nominal each;
// cq-a uses 16 (6 borrowed); deleting cq-a must not free its 10 in the
// cohort while its workloads still run: the cohort keeps 26 promised on
// 20 impossible, and cq-a leaves only with its last reservation.
func TestTerminatingClusterQueueKeepsItsPlaceInTheCohort(t *testing.T) {
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	c.SetClusterQueue(clusterQueue(t, "cq-a", "co", "10"))
	c.SetClusterQueue(clusterQueue(t, "cq-b", "co", "10"))
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "a"}, "cq-a", kueue.None)
	c.UpsertWorkload(admittedWL("w1", "a", "1", "cq-a", "8"))
	c.UpsertWorkload(admittedWL("w2", "a", "2", "cq-a", "8"))
	free := func() resources.Amount {
		var out resources.Amount
		c.Read(func(st *state.State, _ *queueing.Manager) {
			out = st.Tree().ClusterQueue("cq-b").Available(resources.FlavorResource{Flavor: "f", Resource: "cpu"})
		})
		return out
	}
	if got := free(); got != 4000 {
		t.Fatalf("cq-b can use %d milli-cpu before the deletion, want 4000", got)
	}
	terminating := clusterQueue(t, "cq-a", "co", "10")
	terminating.Terminating = true
	c.SetClusterQueue(terminating)
	c.DeleteClusterQueue("cq-a") // the finalizer was removed by force
	if got := free(); got != 4000 {
		t.Fatalf("cq-b can use %d milli-cpu once cq-a is deleted, want still 4000", got)
	}
	snap, _ := c.Snapshot(0)
	if in, ok := snap.ClusterQueueInactive("cq-a"); !ok || in.Reason != state.InactiveTerminating {
		t.Fatalf("cq-a inactive = %v %+v, want Terminating", ok, in)
	}
	c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "w1"})
	if got := free(); got != 12000 {
		t.Fatalf("cq-b can use %d milli-cpu after the first release, want 12000 (cq-a's 10 stay nominal)", got)
	}
	c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "w2"})
	if _, ok := c.ClusterQueue("cq-a"); ok {
		t.Fatal("cq-a must leave once its object is gone and its last reservation released")
	}
	if got := free(); got != 10000 {
		t.Fatalf("cq-b can use %d milli-cpu once cq-a left, want its own 10000", got)
	}
}

// After a restart, a ClusterQueue whose finalizer was removed by force is
// known only from its workloads: those that recorded its cohort (the
// manager writes it while the queue is being deleted) still count in that
// cohort, on a queue without nominal quota (unknown by then); the queue
// leaves with the last of them.
func TestGoneClusterQueueCountsInItsCohortAfterARestart(t *testing.T) {
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	// Events arrive in any order on restart: workloads before queues.
	for i, name := range []string{"w1", "w2"} {
		wl := admittedWL(name, "a", fmt.Sprint(i+1), "cq-a", "8")
		wl.Annotations = map[string]string{state.CohortAnnotation: "co"}
		c.UpsertWorkload(wl)
	}
	c.SetClusterQueue(clusterQueue(t, "cq-b", "co", "10"))
	if got := available(c, "cq-b"); got != 0 {
		t.Fatalf("cq-b can use %d milli-cpu after the restart, want 0 (cq-a's 16 still in use, on cq-b's 10)", got)
	}
	if cq, ok := c.ClusterQueue("cq-a"); !ok || !cq.Terminating || cq.Cohort != "co" {
		t.Fatalf("cq-a = %+v %v, want a terminating queue of cohort co", cq, ok)
	}
	// A workload of cq-b waits, parked, for that quota.
	c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "b"}, "cq-b", kueue.None)
	c.UpsertWorkload(pendingWL("next", "b", "3", "2"))
	next := types.NamespacedName{Namespace: "ns", Name: "next"}
	info, _ := c.Pending(next)
	c.Park("cq-b", info.Shape, nil)
	c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "w1"})
	c.Park("cq-b", info.Shape, nil)
	c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "w2"})
	if _, ok := c.ClusterQueue("cq-a"); ok {
		t.Fatal("cq-a must leave with its last reservation")
	}
	var parked bool
	c.Read(func(_ *state.State, q *queueing.Manager) { parked = q.Parked(next) })
	if parked {
		t.Fatal("the release of the gone queue's last reservation must wake the rest of its cohort")
	}
	if got := available(c, "cq-b"); got != 10000 {
		t.Fatalf("cq-b can use %d milli-cpu once cq-a's workloads are gone, want 10000", got)
	}
}

// A ClusterQueue that comes back (recreated, or its events simply arrive
// after its workloads') takes over from the record: its own quota and
// cohort count, the workloads' usage is counted once.
func TestRecreatedClusterQueueReplacesTheRecord(t *testing.T) {
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	wl := admittedWL("w1", "a", "1", "cq-a", "8")
	wl.Annotations = map[string]string{state.CohortAnnotation: "co"}
	c.UpsertWorkload(wl)
	c.SetClusterQueue(clusterQueue(t, "cq-b", "co", "10"))
	c.SetClusterQueue(clusterQueue(t, "cq-a", "co", "10"))
	if got := available(c, "cq-b"); got != 12000 {
		t.Fatalf("cq-b can use %d milli-cpu, want 12000 (20 nominal, 8 used)", got)
	}
	if cq, _ := c.ClusterQueue("cq-a"); cq.Terminating {
		t.Fatal("the live cq-a must not stay terminating")
	}
	c.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "w1"})
	if _, ok := c.ClusterQueue("cq-a"); !ok {
		t.Fatal("a live ClusterQueue must not leave with its last reservation")
	}
}

// available is how much cpu of flavor f the ClusterQueue may still use.
func available(c *Cache, cq kueue.ClusterQueueReference) resources.Amount {
	var out resources.Amount
	c.Read(func(st *state.State, _ *queueing.Manager) {
		out = st.Tree().ClusterQueue(cq).Available(resources.FlavorResource{Flavor: "f", Resource: "cpu"})
	})
	return out
}

// A LocalQueue whose workloads of a shape never finished yet borrows the
// estimate of that shape from the other LocalQueues of its cohort tree
// (at start-up every victim is otherwise unknown and preempted at once),
// marked borrowed; never from another tree (another tenant's jobs of the
// same size say nothing); and once it has runtimes of its own, they are
// used.
func TestExpectedEndBorrowedWithinTheCohortTree(t *testing.T) {
	c, put1 := treeCache(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(name, lq, rv, cq string, reserved time.Time, ran time.Duration) {
		put1(name, lq, rv, cq, "1", reserved, ran)
	}
	get := func(name string) *state.Admitted {
		a, ok := c.Admitted(types.NamespacedName{Namespace: "ns", Name: name})
		if !ok {
			t.Fatalf("%s holds no quota", name)
		}
		return a
	}
	put("mine", "a", "1", "cq-a", t0, 0)
	put("theirs", "b", "2", "cq-b", t0.Add(time.Second), 0)
	put("stranger", "other", "3", "cq-other", t0.Add(time.Second), 0)
	put("mine", "a", "4", "cq-a", t0, 3*time.Second)
	if a := get("theirs"); a.ExpectedEnd != t0.Add(4*time.Second).UnixNano() || !a.EstimateBorrowed {
		t.Fatalf("b's workload: expected end %v borrowed %v, want %v (reserved + 3 s, a's runtime in the same cohort) borrowed",
			time.Unix(0, a.ExpectedEnd), a.EstimateBorrowed, t0.Add(4*time.Second))
	}
	if a := get("stranger"); a.ExpectedEnd != 0 {
		t.Fatalf("a workload of another cohort tree got expected end %v, want unknown", time.Unix(0, a.ExpectedEnd))
	}
	put("next", "b", "5", "cq-b", t0.Add(10*time.Second), 0)
	if a := get("next"); a.ExpectedEnd != t0.Add(13*time.Second).UnixNano() || !a.EstimateBorrowed {
		t.Fatalf("b's next workload: expected end %v borrowed %v, want reserved + 3 s, borrowed", time.Unix(0, a.ExpectedEnd), a.EstimateBorrowed)
	}
	put("theirs", "b", "6", "cq-b", t0.Add(time.Second), time.Second)
	if a := get("next"); a.ExpectedEnd != t0.Add(11*time.Second).UnixNano() || a.EstimateBorrowed {
		t.Fatalf("once b has a runtime of its own: expected end %v borrowed %v, want reserved + 1 s, not borrowed",
			time.Unix(0, a.ExpectedEnd), a.EstimateBorrowed)
	}
}

// The cache estimates when a running workload ends from how long the last
// ones of its LocalQueue and shape ran; running workloads admitted before
// the first of them ended get the estimate too.
func TestExpectedEndFromRuntimes(t *testing.T) {
	c := newTestCache(t, "10")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reserve := func(name string, at time.Time) {
		wl := admittedWL(name, "lq", "1", "cq", "1")
		wl.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at)
		c.UpsertWorkload(wl)
	}
	reserve("first", t0)
	reserve("second", t0.Add(time.Second))
	if a, _ := c.Admitted(types.NamespacedName{Namespace: "ns", Name: "second"}); a.ExpectedEnd != 0 {
		t.Fatalf("expected end %d without any history, want 0 (unknown)", a.ExpectedEnd)
	}
	done := admittedWL("first", "lq", "2", "cq", "1")
	done.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0)
	done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished,
		Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: metav1.NewTime(t0.Add(3 * time.Second))})
	// As the manager's informer delivers a finished Workload: without its
	// pod templates (internal/app trims them); the shape is the held one's.
	for i := range done.Spec.PodSets {
		done.Spec.PodSets[i] = kueue.PodSet{Name: done.Spec.PodSets[i].Name, Count: done.Spec.PodSets[i].Count}
	}
	c.UpsertWorkload(done)
	a, _ := c.Admitted(types.NamespacedName{Namespace: "ns", Name: "second"})
	if want := t0.Add(4 * time.Second).UnixNano(); a.ExpectedEnd != want {
		t.Fatalf("running workload's expected end %v, want %v (reserved + 3s)", time.Unix(0, a.ExpectedEnd), time.Unix(0, want))
	}
	c.UpsertWorkload(pendingWL("third", "lq", "3", "1"))
	at := t0.Add(10 * time.Second).UnixNano()
	if err := c.Assume(&state.Admitted{Key: types.NamespacedName{Namespace: "ns", Name: "third"}, UID: "uid-third",
		ClusterQueue: "cq", ReservedAt: at}, "3"); err != nil {
		t.Fatal(err)
	}
	a, _ = c.Admitted(types.NamespacedName{Namespace: "ns", Name: "third"})
	if want := at + int64(3*time.Second); a.ExpectedEnd != want {
		t.Fatalf("assumed workload's expected end %d, want %d", a.ExpectedEnd, want)
	}
}

// A workload's estimate is the median of recent runtimes: one slow finish
// (a job whose end was reported late) does not make its shape read as
// long-running, so its workloads are still waited for.
func TestEstimateIsTheMedianRuntime(t *testing.T) {
	h := runtimeHistory{}
	k := runtimeKey{lq: LocalQueueKey{Namespace: "ns", Name: "lq"}, shape: "s"}
	if _, ok := h.typical(k); ok {
		t.Fatal("an estimate without samples")
	}
	for _, d := range []time.Duration{2 * time.Second, 40 * time.Second, time.Second, 3 * time.Second} {
		h.add(k, d)
	}
	if got, _ := h.typical(k); got != 3*time.Second {
		t.Fatalf("estimate %v from 2s, 40s, 1s, 3s; want the median, 3s", got)
	}
	for range runtimeSamples {
		h.add(k, time.Minute)
	}
	if got, _ := h.typical(k); got != time.Minute {
		t.Fatalf("estimate %v after %d runs of 1m; want only the recent ones counted", got, runtimeSamples)
	}
}

// While no workload of its shape has finished in its cohort tree, a
// running workload borrows the median runtime of the tree's workloads of
// any shape (at start-up larger workloads run before any of them ended);
// the first end of its own shape in the tree replaces that estimate.
// Another tree's runtimes are never used.
func TestExpectedEndFromAnyShapeOfTheTree(t *testing.T) {
	c, put := treeCache(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := func(name string) (time.Time, bool) {
		a, ok := c.Admitted(types.NamespacedName{Namespace: "ns", Name: name})
		if !ok {
			t.Fatalf("%s holds no quota", name)
		}
		if a.ExpectedEnd == 0 {
			return time.Time{}, a.EstimateBorrowed
		}
		return time.Unix(0, a.ExpectedEnd).UTC(), a.EstimateBorrowed
	}
	put("small", "a", "1", "cq-a", "1", t0, 0)
	put("medium", "b", "2", "cq-b", "5", t0.Add(time.Second), 0)
	put("stranger", "other", "3", "cq-other", "5", t0.Add(time.Second), 0)
	put("small", "a", "4", "cq-a", "1", t0, 2*time.Second)
	if got, borrowed := end("medium"); !got.Equal(t0.Add(3*time.Second)) || !borrowed {
		t.Fatalf("medium: expected end %v borrowed %v, want %v (reserved + 2 s, the tree's runtime of any shape) borrowed",
			got, borrowed, t0.Add(3*time.Second))
	}
	if got, _ := end("stranger"); !got.IsZero() {
		t.Fatalf("a workload of another cohort tree got expected end %v, want unknown", got)
	}
	put("medium2", "a", "5", "cq-a", "5", t0, 0)
	put("medium2", "a", "6", "cq-a", "5", t0, 6*time.Second)
	if got, borrowed := end("medium"); !got.Equal(t0.Add(7*time.Second)) || !borrowed {
		t.Fatalf("medium once one of its shape ended in the tree: expected end %v borrowed %v, want %v (reserved + 6 s) borrowed",
			got, borrowed, t0.Add(7*time.Second))
	}
}

// treeCache returns a cache with ClusterQueues cq-a and cq-b in Cohort
// team and cq-other alone, LocalQueues a, b and other in namespace ns, and
// a function that upserts a workload reserved at a time and, when ran is
// positive, finished that long after.
func treeCache(t *testing.T) (*Cache, func(name, lq, rv, cq, cpu string, reserved time.Time, ran time.Duration)) {
	c := New(lifecycle.Options{})
	c.SetFlavor(&state.Flavor{Name: "f"})
	c.SetNamespace("ns", nil)
	c.SetClusterQueue(clusterQueue(t, "cq-a", "team", "10"))
	c.SetClusterQueue(clusterQueue(t, "cq-b", "team", "10"))
	c.SetClusterQueue(clusterQueue(t, "cq-other", "", "10"))
	for lq, cq := range map[string]kueue.ClusterQueueReference{"a": "cq-a", "b": "cq-b", "other": "cq-other"} {
		c.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: kueue.LocalQueueName(lq)}, cq, kueue.None)
	}
	return c, func(name, lq, rv, cq, cpu string, reserved time.Time, ran time.Duration) {
		wl := admittedWL(name, lq, rv, cq, cpu)
		wl.Status.Conditions[0].LastTransitionTime = metav1.NewTime(reserved)
		if ran > 0 {
			wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished,
				Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: metav1.NewTime(reserved.Add(ran))})
		}
		c.UpsertWorkload(wl)
	}
}
