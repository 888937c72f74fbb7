package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A Job with a queue name is suspended on creation, admitted, runs its pods
// on the flavor's nodes to completion, and its quota returns.
func TestJobRunsOnItsFlavorAndReturnsQuota(t *testing.T) {
	ns, cq := queues(t, "4")
	j := job(ns, "train", "lq", 2, 4, "1")
	create(t, j)
	if !ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("the webhook must suspend a Job that has a queue name")
	}
	waitComplete(t, ns, "train", 60*time.Second)
	ps := pods(t, ns, "train")
	if len(ps) < 4 {
		t.Fatalf("%d pods, want 4 completions", len(ps))
	}
	for _, p := range ps {
		if p.Spec.NodeSelector[poolKey] != onDemand || !strings.HasPrefix(p.Spec.NodeName, onDemand) {
			t.Errorf("pod %s: node selector %v, node %s; want the on-demand flavor's nodes", p.Name, p.Spec.NodeSelector, p.Spec.NodeName)
		}
	}
	eventually(t, 30*time.Second, "quota returned", func() error {
		if n := reserving(t, cq); n != 0 {
			return fmt.Errorf("%d workloads still reserve quota", n)
		}
		return nil
	})
	wl, err := workloadOf(t, getJob(t, ns, "train"))
	if err != nil || !hasCondition(wl, kueue.WorkloadFinished, metav1.ConditionTrue) {
		t.Fatalf("Workload %v (%v), want Finished", wl.Status.Conditions, err)
	}
}

// A Job over quota waits, and runs once the quota frees.
func TestJobOverQuotaWaitsForQuota(t *testing.T) {
	ns, _ := queues(t, "2")
	create(t, job(ns, "first", "lq", 2, 6, "1"))
	eventually(t, 30*time.Second, "first runs", func() error {
		if j := getJob(t, ns, "first"); ptr.Deref(j.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		return nil
	})
	create(t, job(ns, "second", "lq", 2, 2, "1"))
	eventually(t, 30*time.Second, "second waits for quota", func() error {
		wl, err := workloadOf(t, getJob(t, ns, "second"))
		if err != nil {
			return err
		}
		if !hasCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	if n := len(pods(t, ns, "second")); n != 0 {
		t.Fatalf("the waiting Job has %d pods", n)
	}
	waitComplete(t, ns, "first", 90*time.Second)
	waitComplete(t, ns, "second", 60*time.Second)
}

// A high-priority Job preempts a low-priority one: the low one's pods go
// away, the high one runs to completion, then the low one runs again.
func TestHighPriorityJobPreemptsLowPriorityJob(t *testing.T) {
	ns, _ := queues(t, "2")
	create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 1000})
	t.Cleanup(func() {
		_ = suite.client.Delete(context.Background(), &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}})
	})
	create(t, job(ns, "low", "lq", 2, 400, "1"))
	eventually(t, 30*time.Second, "low runs", func() error {
		if n := runningPods(t, ns, "low"); n == 0 {
			return fmt.Errorf("no pod running")
		}
		return nil
	})
	high := job(ns, "high", "lq", 2, 2, "1")
	high.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	create(t, high)
	eventually(t, 30*time.Second, "low preempted: suspended, pods gone", func() error {
		j := getJob(t, ns, "low")
		if !ptr.Deref(j.Spec.Suspend, false) {
			lw, _ := workloadOf(t, j)
			hw, _ := workloadOf(t, getJob(t, ns, "high"))
			return fmt.Errorf("low still running; its Workload: %v; high's: %v", lw.Status.Conditions, hw.Status.Conditions)
		}
		if n := runningPods(t, ns, "low"); n != 0 {
			return fmt.Errorf("%d pods of low still there", n)
		}
		return nil
	})
	waitComplete(t, ns, "high", 60*time.Second)
	eventually(t, 30*time.Second, "low runs again", func() error {
		j := getJob(t, ns, "low")
		if ptr.Deref(j.Spec.Suspend, true) {
			return fmt.Errorf("still suspended")
		}
		wl, err := workloadOf(t, j)
		if err != nil {
			return err
		}
		if s := wl.Status.SchedulingStats; s == nil || len(s.Evictions) == 0 || s.Evictions[0].Reason != kueue.WorkloadEvictedByPreemption {
			return fmt.Errorf("schedulingStats %+v, want a preemption", s)
		}
		return nil
	})
	_ = suite.client.Delete(context.Background(), getJob(t, ns, "low"), client.PropagationPolicy(metav1.DeletePropagationBackground))
}

// Partial admission runs a smaller parallelism when the whole Job does not
// fit.
func TestPartialAdmissionRunsSmallerParallelism(t *testing.T) {
	ns, _ := queues(t, "3")
	j := job(ns, "wide", "lq", 5, 5, "1")
	j.Annotations = map[string]string{batchjob.MinParallelismAnnotation: "2"}
	create(t, j)
	eventually(t, 30*time.Second, "wide runs with parallelism 3", func() error {
		j := getJob(t, ns, "wide")
		if ptr.Deref(j.Spec.Suspend, true) || ptr.Deref(j.Spec.Parallelism, 0) != 3 {
			return fmt.Errorf("suspended %v parallelism %d", ptr.Deref(j.Spec.Suspend, true), ptr.Deref(j.Spec.Parallelism, 0))
		}
		return nil
	})
	waitComplete(t, ns, "wide", 60*time.Second)
}

// A Job without a queue name runs as if Kuota were not there.
func TestJobWithoutQueueNameIsUntouched(t *testing.T) {
	ns := namespace(t)
	j := job(ns, "plain", "", 1, 1, "1")
	create(t, j)
	if ptr.Deref(j.Spec.Suspend, false) {
		t.Fatal("a Job without a queue name must not be suspended")
	}
	waitComplete(t, ns, "plain", 60*time.Second)
	if _, err := workloadOf(t, getJob(t, ns, "plain")); err == nil {
		t.Fatal("a Job without a queue name must get no Workload")
	}
}

// A Job naming a LocalQueue that does not exist stays suspended, with a
// clear condition and event; a user cannot start it by hand.
func TestJobWithMissingQueueStaysSuspended(t *testing.T) {
	ns := namespace(t)
	create(t, job(ns, "lost", "no-such-queue", 1, 1, "1"))
	var wl *kueue.Workload
	eventually(t, 30*time.Second, "the Workload explains why it waits", func() error {
		var err error
		if wl, err = workloadOf(t, getJob(t, ns, "lost")); err != nil {
			return err
		}
		c := metaCondition(wl, kueue.WorkloadQuotaReserved)
		if c == nil || c.Reason != kueue.WorkloadReasonMisconfigured || !strings.Contains(c.Message, "no-such-queue") {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	eventually(t, 30*time.Second, "a Warning event on the Workload", func() error {
		var events corev1.EventList
		if err := suite.client.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == wl.Name && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(events.Items))
	})
	j := getJob(t, ns, "lost")
	j.Spec.Suspend = ptr.To(false)
	err := suite.client.Update(context.Background(), j)
	if err == nil || !strings.Contains(err.Error(), "spec.suspend") {
		t.Fatalf("starting an unadmitted Job by hand: %v, want a rejection naming spec.suspend", err)
	}
	time.Sleep(2 * time.Second)
	if n := len(pods(t, ns, "lost")); n != 0 {
		t.Fatalf("%d pods exist for a Job that was never admitted", n)
	}
}

func metaCondition(wl *kueue.Workload, typ string) *metav1.Condition {
	for i := range wl.Status.Conditions {
		if wl.Status.Conditions[i].Type == typ {
			return &wl.Status.Conditions[i]
		}
	}
	return nil
}

// The pod watcher saw the managed Jobs' pods (so its verdict means
// something).
func TestZPodWatcherSawManagedPods(t *testing.T) {
	if n := suite.pods.checked(); n == 0 {
		t.Fatal("the pod watcher checked no pod of a managed Job")
	}
}
