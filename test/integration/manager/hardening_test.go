package manager

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// A restarted manager keeps the finalizer of a terminating ClusterQueue
// while its workloads still hold quota: the new manager counts them only
// once its cache holds every workload, never from a half-loaded one.
func TestClusterQueueFinalizerSurvivesRestart(t *testing.T) {
	first := startManager(t)
	ns, cq, _ := singleQueue(t, "100")
	ctx := context.Background()
	// Many workloads, so that the Workload informer is still loading when
	// the ClusterQueue informer is ready.
	var names []string
	for i := range 100 {
		names = append(names, fmt.Sprintf("w%03d", i))
		create(t, newWorkload(ns, names[i], "lq", 1, "1", 0))
	}
	for _, name := range names {
		waitAdmitted(t, ns, name, cq)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}); err != nil {
		t.Fatal(err)
	}
	startManager(t)
	afterCycles(t, quietCycles, func() error {
		var obj kueue.ClusterQueue
		if err := env.Client.Get(ctx, types.NamespacedName{Name: cq}, &obj); err != nil {
			return fmt.Errorf("the terminating ClusterQueue went while its workloads run: %v", err)
		}
		return nil
	})
	waitClusterQueueActive(t, cq, metav1.ConditionFalse, "Terminating")
	for _, name := range names {
		finish(t, ns, name)
	}
	eventually(t, 45*time.Second, "the ClusterQueue gone once its workloads finished", func() error {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: cq}, &kueue.ClusterQueue{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
}

// The status reporter's writes, and anyone's status writes to queues, do
// not wake the queues: 100 status refreshes of a ClusterQueue, a
// LocalQueue and a Cohort cause no unpark and no scheduling cycle.
func TestStatusWritesDoNotWakeTheQueues(t *testing.T) {
	m := startManager(t)
	ns, cq, _ := singleQueue(t, "1")
	cohort := scoped(ns, "co")
	create(t, &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: cohort}})
	create(t, newWorkload(ns, "running", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "running", cq)
	create(t, newWorkload(ns, "parked", "lq", 1, "1", 0))
	waitPending(t, ns, "parked", kueue.WorkloadReasonWaitingForQuota)
	// Let the reporter publish and go quiet.
	waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
		if st.PendingWorkloads != 1 || st.AdmittedWorkloads != 1 {
			return fmt.Errorf("pending %d admitted %d", st.PendingWorkloads, st.AdmittedWorkloads)
		}
		return nil
	})
	time.Sleep(time.Second)
	cycles, unparks := m.Scheduler.Cycles(), m.Cache.Unparks()
	var lastCQ, lastLQ, lastCohort string
	for i := range 100 {
		updateStatus(t, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}, func(o *kueue.ClusterQueue) {
			o.Status.FairSharing = &kueue.FairSharingStatus{WeightedShare: int64(i)}
		})
		lastCQ = getClusterQueue(t, cq).ResourceVersion
		updateStatus(t, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}}, func(o *kueue.LocalQueue) {
			o.Status.FairSharing = &kueue.LocalQueueFairSharingStatus{WeightedShare: int64(i)}
		})
		updateStatus(t, &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: cohort}}, func(o *kueue.Cohort) {
			o.Status.FairSharing = &kueue.FairSharingStatus{WeightedShare: int64(i)}
		})
	}
	var lq kueue.LocalQueue
	var co kueue.Cohort
	if err := env.Client.Get(context.Background(), objectKey(ns, "lq"), &lq); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(context.Background(), objectKey("", cohort), &co); err != nil {
		t.Fatal(err)
	}
	lastLQ, lastCohort = lq.ResourceVersion, co.ResourceVersion
	// Wait until the manager's informers have seen the last writes.
	eventually(t, 45*time.Second, "the manager's informers caught up", func() error {
		var c kueue.ClusterQueue
		var l kueue.LocalQueue
		var h kueue.Cohort
		if err := m.GetClient().Get(context.Background(), objectKey("", cq), &c); err != nil || rvBefore(c.ResourceVersion, lastCQ) {
			return fmt.Errorf("ClusterQueue at %s, want %s (%v)", c.ResourceVersion, lastCQ, err)
		}
		if err := m.GetClient().Get(context.Background(), objectKey(ns, "lq"), &l); err != nil || rvBefore(l.ResourceVersion, lastLQ) {
			return fmt.Errorf("LocalQueue at %s, want %s (%v)", l.ResourceVersion, lastLQ, err)
		}
		if err := m.GetClient().Get(context.Background(), objectKey("", cohort), &h); err != nil || rvBefore(h.ResourceVersion, lastCohort) {
			return fmt.Errorf("Cohort at %s, want %s (%v)", h.ResourceVersion, lastCohort, err)
		}
		return nil
	})
	if got := m.Cache.Unparks() - unparks; got != 0 {
		t.Errorf("100 status refreshes caused %d unparks, want 0", got)
	}
	if got := m.Scheduler.Cycles() - cycles; got != 0 {
		t.Errorf("100 status refreshes caused %d scheduling cycles, want 0", got)
	}
}

// A panic while deciding one workload is contained to it: that workload
// is set aside with a condition and an event, every other workload keeps
// being scheduled.
func TestPanicWhileDecidingOneWorkloadIsContained(t *testing.T) {
	startPrepared(t, func(m *app.Manager) {
		m.Scheduler.Decide = func(snap *state.Snapshot, qs []workload.Queue, o scheduling.Options) scheduling.Result {
			for _, q := range qs {
				for _, w := range q.Workloads {
					if w.Key.Name == "poison" {
						panic("test hook: deciding the poison workload")
					}
				}
			}
			return scheduling.Decide(snap, qs, o)
		}
	})
	ns, cq, _ := singleQueue(t, "10")
	create(t, newWorkload(ns, "before", "lq", 1, "1", 0), newWorkload(ns, "poison", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "before", cq)
	waitPending(t, ns, "poison", "InternalError")
	waitEvent(t, ns, "poison", corev1.EventTypeWarning, "Pending")
	for i := range 3 {
		name := fmt.Sprintf("after%d", i)
		create(t, newWorkload(ns, name, "lq", 1, "1", 0))
		waitAdmitted(t, ns, name, cq)
	}
	stayPending(t, ns, "poison")
}

// A workload set aside after a failure, deleted and created again under
// the same name (so at the same generation, as a recreated job's workload
// is) is a new workload: once the failure is gone it is admitted, not set
// aside like the one before it.
func TestRecreatedWorkloadIsScheduledAgain(t *testing.T) {
	var poisoned atomic.Bool
	poisoned.Store(true)
	startPrepared(t, func(m *app.Manager) {
		m.Scheduler.Decide = func(snap *state.Snapshot, qs []workload.Queue, o scheduling.Options) scheduling.Result {
			for _, q := range qs {
				for _, w := range q.Workloads {
					if w.Key.Name == "poison" && poisoned.Load() {
						panic("test hook: deciding the poison workload")
					}
				}
			}
			return scheduling.Decide(snap, qs, o)
		}
	})
	ns, cq, _ := singleQueue(t, "10")
	create(t, newWorkload(ns, "poison", "lq", 1, "1", 0))
	waitPending(t, ns, "poison", "InternalError")
	first := getWorkload(t, ns, "poison")
	poisoned.Store(false)
	ctx := context.Background()
	if err := env.Client.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the first workload gone", func() error {
		var wl kueue.Workload
		if err := env.Client.Get(ctx, objectKey(ns, "poison"), &wl); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	create(t, newWorkload(ns, "poison", "lq", 1, "1", 0))
	if again := getWorkload(t, ns, "poison"); again.Generation != first.Generation || again.UID == first.UID {
		t.Fatalf("the workload created again has generation %d and UID %s, want generation %d and a new UID",
			again.Generation, again.UID, first.Generation)
	}
	waitAdmitted(t, ns, "poison", cq)
}

// A status write the API server refuses for good (here a
// ValidatingAdmissionPolicy denies one workload's admission) is not a hot
// loop: that workload backs off and is told why it waits, the others keep
// being admitted, and the API server sees a bounded number of attempts.
func TestRefusedAdmissionBacksOff(t *testing.T) {
	ns, cq, _ := singleQueue(t, "10")
	create(t, newWorkload(ns, "denied", "lq", 1, "1", 0))
	policy := denyAdmissionOf(t, ns, "denied")
	baseline := policyDenials(t, policy)
	startManager(t)
	create(t, newWorkload(ns, "fine", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "fine", cq)
	msg := waitEvent(t, ns, "denied", corev1.EventTypeWarning, "AdmissionRejected")
	waitWorkload(t, ns, "denied", "told why it waits", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != kueue.WorkloadReasonMisconfigured || !strings.Contains(c.Message, "denied by test policy") {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	if !strings.Contains(msg, "denied by test policy") {
		t.Errorf("event message %q does not name the error", msg)
	}
	for i := range 3 {
		name := fmt.Sprintf("more%d", i)
		create(t, newWorkload(ns, name, "lq", 1, "1", 0))
		waitAdmitted(t, ns, name, cq)
	}
	// Backoff 1 s, 2 s, 4 s, 8 s...: about 5 attempts in 15 s, not hundreds.
	time.Sleep(10 * time.Second)
	if n := policyDenials(t, policy) - baseline; n < 3 || n > 8 {
		t.Errorf("the API server denied %d admission attempts of the refused workload, want a few (3..8)", n)
	}
	if wl := getWorkload(t, ns, "denied"); wl.Status.Admission != nil {
		t.Fatalf("denied workload admitted: %+v", wl.Status.Admission)
	}
}

// Status tells the truth: a workload whose LocalQueue points to a missing
// ClusterQueue says so; a pending workload set inactive says it is
// deactivated, not why it waited before.
func TestStatusTellsTheTruth(t *testing.T) {
	startManager(t)
	ns, cq, _ := singleQueue(t, "1")
	create(t, localQueue(ns, "orphan", scoped(ns, "missing")))
	create(t, newWorkload(ns, "lost", "orphan", 1, "1", 0))
	waitWorkload(t, ns, "lost", "misconfigured", func(wl *kueue.Workload) error {
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
		want := fmt.Sprintf("ClusterQueue %s doesn't exist", scoped(ns, "missing"))
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != kueue.WorkloadReasonMisconfigured || c.Message != want {
			return fmt.Errorf("QuotaReserved %+v, want Misconfigured %q", c, want)
		}
		return nil
	})
	waitEvent(t, ns, "lost", corev1.EventTypeWarning, kueue.WorkloadReasonMisconfigured)

	create(t, newWorkload(ns, "running", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "running", cq)
	create(t, newWorkload(ns, "waiting", "lq", 1, "1", 0))
	waitPending(t, ns, "waiting", kueue.WorkloadReasonWaitingForQuota)
	setActive(t, ns, "waiting", false)
	waitWorkload(t, ns, "waiting", "marked deactivated", func(wl *kueue.Workload) error {
		if err := hasCondition(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByDeactivation); err != nil {
			return err
		}
		if err := hasCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.WorkloadEvictedByDeactivation); err != nil {
			return err
		}
		return hasCondition(wl, kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.WorkloadEvictedByDeactivation)
	})
	// Reactivated, it queues again (and is admitted once quota frees).
	setActive(t, ns, "waiting", true)
	waitWorkload(t, ns, "waiting", "requeued", func(wl *kueue.Workload) error {
		return hasCondition(wl, kueue.WorkloadRequeued, metav1.ConditionTrue, kueue.WorkloadReactivated)
	})
	finish(t, ns, "running")
	waitAdmitted(t, ns, "waiting", cq)
}

// rvBefore reports whether resourceVersion a is older than b (etcd
// revisions, compared as numbers).
func rvBefore(a, b string) bool {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	return x < y
}
