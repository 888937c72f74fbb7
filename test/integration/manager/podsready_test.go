package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// shortPodsReady configures waitForPodsReady with second-scale timeouts.
func shortPodsReady(timeout, recovery time.Duration, limit *int32) func(*configapi.Configuration) {
	return func(c *configapi.Configuration) {
		c.WaitForPodsReady = &configapi.WaitForPodsReady{
			Timeout:         metav1.Duration{Duration: timeout},
			RecoveryTimeout: &metav1.Duration{Duration: recovery},
			RequeuingStrategy: &configapi.RequeuingStrategy{
				Timestamp:          ptr.To(configapi.EvictionTimestamp),
				BackoffBaseSeconds: ptr.To[int32](1), BackoffMaxSeconds: ptr.To[int32](2),
				BackoffLimitCount: limit,
			},
		}
	}
}

// setPodsReady sets the PodsReady condition, as a job integration would.
func setPodsReady(t *testing.T, ns, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	updateStatus(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, func(wl *kueue.Workload) {
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPodsReady, Status: status,
			Reason: reason, Message: "set by the test"})
	})
}

func requeueCount(wl *kueue.Workload) int32 {
	if wl.Status.RequeueState == nil {
		return 0
	}
	return ptr.Deref(wl.Status.RequeueState.Count, 0)
}

// A workload whose pods never become ready is evicted after the timeout,
// requeued after a backoff, admitted again, and deactivated once its
// requeues run out; one whose pods are ready keeps running.
func TestWaitForPodsReadyTimeoutBackoffAndLimit(t *testing.T) {
	startManager(t, shortPodsReady(2*time.Second, 0, ptr.To[int32](1)))
	ns, cq, _ := singleQueue(t, "4")
	// The healthy workload's pods are ready as soon as it exists: set
	// after waiting for its admission, a loaded machine could let its
	// 2 s timeout pass first.
	create(t, newWorkload(ns, "healthy", "lq", 1, "1", 0))
	setPodsReady(t, ns, "healthy", metav1.ConditionTrue, kueue.WorkloadStarted)
	create(t, newWorkload(ns, "stuck", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "stuck", cq)
	waitAdmitted(t, ns, "healthy", cq)
	if wl := getWorkload(t, ns, "healthy"); !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady) {
		t.Fatalf("the admission dropped the healthy workload's PodsReady: %v", wl.Status.Conditions)
	}

	waitWorkload(t, ns, "stuck", "evicted for the pods-ready timeout", func(wl *kueue.Workload) error {
		if err := hasCondition(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPodsReadyTimeout); err != nil {
			return err
		}
		if requeueCount(wl) != 1 || wl.Status.RequeueState.RequeueAt == nil {
			return fmt.Errorf("requeueState %+v, want count 1 and a requeueAt", wl.Status.RequeueState)
		}
		s := wl.Status.SchedulingStats
		if s == nil || len(s.Evictions) != 1 || s.Evictions[0].UnderlyingCause != kueue.WorkloadWaitForStart {
			return fmt.Errorf("schedulingStats %+v, want one eviction caused by WaitForStart", s)
		}
		return nil
	})
	// After the backoff it is requeued and admitted again.
	waitWorkload(t, ns, "stuck", "requeued after the backoff", func(wl *kueue.Workload) error {
		return hasCondition(wl, kueue.WorkloadRequeued, metav1.ConditionTrue, kueue.WorkloadBackoffFinished)
	})
	waitAdmitted(t, ns, "stuck", cq)
	// The second timeout exceeds backoffLimitCount 1: deactivation.
	waitWorkload(t, ns, "stuck", "deactivated past the requeuing limit", func(wl *kueue.Workload) error {
		if ptr.Deref(wl.Spec.Active, true) {
			return fmt.Errorf("spec.active is still true")
		}
		if err := hasCondition(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, "DeactivatedDueToRequeuingLimitExceeded"); err != nil {
			return err
		}
		if wl.Status.Admission != nil {
			return fmt.Errorf("admission still set")
		}
		if meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadDeactivationTarget) != nil {
			return fmt.Errorf("the DeactivationTarget marker was not consumed")
		}
		return nil
	})
	waitEvent(t, ns, "stuck", "Normal", "EvictedDueToDeactivatedDueToRequeuingLimitExceeded")
	// The healthy workload was never touched.
	if wl := getWorkload(t, ns, "healthy"); meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted) != nil {
		t.Errorf("a workload with ready pods was evicted: %v", wl.Status.Conditions)
	}

	// Reactivation resets the backoff and queues it again.
	setActive(t, ns, "stuck", true)
	waitAdmitted(t, ns, "stuck", cq)
	requeuedAs(t, ns, "stuck", kueue.WorkloadReactivated)
	if wl := getWorkload(t, ns, "stuck"); wl.Status.RequeueState != nil {
		t.Errorf("requeueState %+v survived the reactivation", wl.Status.RequeueState)
	}
}

// After its pods were ready, a workload that loses one is evicted once the
// recovery timeout passes, with cause WaitForRecovery.
func TestWaitForPodsReadyRecoveryTimeout(t *testing.T) {
	startManager(t, shortPodsReady(time.Hour, 2*time.Second, nil))
	ns, cq, _ := singleQueue(t, "4")
	create(t, newWorkload(ns, "flaky", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "flaky", cq)
	setPodsReady(t, ns, "flaky", metav1.ConditionTrue, kueue.WorkloadStarted)
	stayAdmitted(t, ns, "flaky")
	setPodsReady(t, ns, "flaky", metav1.ConditionFalse, string(kueue.WorkloadWaitForRecovery))
	waitWorkload(t, ns, "flaky", "evicted for the recovery timeout", func(wl *kueue.Workload) error {
		s := wl.Status.SchedulingStats
		if s == nil || len(s.Evictions) != 1 || s.Evictions[0].Reason != kueue.WorkloadEvictedByPodsReadyTimeout ||
			s.Evictions[0].UnderlyingCause != kueue.WorkloadWaitForRecovery {
			return fmt.Errorf("schedulingStats %+v, want one PodsReadyTimeout eviction caused by WaitForRecovery", s)
		}
		return nil
	})
}

// A workload admitted for longer than spec.maximumExecutionTimeSeconds is
// deactivated.
func TestMaximumExecutionTime(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "4")
	wl := newWorkload(ns, "long", "lq", 1, "1", 0)
	wl.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](2)
	create(t, wl)
	waitAdmitted(t, ns, "long", cq)
	waitWorkload(t, ns, "long", "deactivated for running too long", func(wl *kueue.Workload) error {
		if ptr.Deref(wl.Spec.Active, true) {
			return fmt.Errorf("spec.active is still true")
		}
		if err := hasCondition(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, "DeactivatedDueToMaximumExecutionTimeExceeded"); err != nil {
			return err
		}
		if wl.Status.AccumulatedPastExecutionTimeSeconds != nil {
			return fmt.Errorf("accumulated execution time %d not reset", *wl.Status.AccumulatedPastExecutionTimeSeconds)
		}
		return nil
	})
	waitUsage(t, cq, fl, 0, "0", "0")
}

// blockAdmission admits one workload at a time: the next waits until the
// pods of every admitted workload are ready.
func TestWaitForPodsReadyBlockAdmission(t *testing.T) {
	startManager(t, shortPodsReady(time.Hour, 0, nil), func(c *configapi.Configuration) {
		c.WaitForPodsReady.BlockAdmission = ptr.To(true)
	})
	ns, cq, _ := singleQueue(t, "4")
	keepOthersReady(t, ns)
	create(t, newWorkload(ns, "a", "lq", 1, "1", 10), newWorkload(ns, "b", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "a", cq)
	waitPending(t, ns, "b", kueue.WorkloadReasonWaitingForPodsReady)
	stayPending(t, ns, "b")
	setPodsReady(t, ns, "a", metav1.ConditionTrue, kueue.WorkloadStarted)
	waitAdmitted(t, ns, "b", cq)
}

// keepOthersReady marks PodsReady=True on every admitted Workload outside
// ns until the test ends: Workloads left by earlier tests are admitted
// again as they come back from evictions, and without ready pods they
// would block every admission.
func keepOthersReady(t *testing.T, ns string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	sweep := func() {
		var all kueue.WorkloadList
		if err := env.Client.List(ctx, &all); err != nil {
			return
		}
		for i := range all.Items {
			wl := &all.Items[i]
			if wl.Namespace == ns || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) ||
				meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadPodsReady) {
				continue
			}
			meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadPodsReady,
				Status: metav1.ConditionTrue, Reason: kueue.WorkloadStarted, Message: "set by the test"})
			_ = env.Client.Status().Update(ctx, wl) // a conflict is retried on the next sweep
		}
	}
	sweep()
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sweep()
			}
		}
	}()
}
