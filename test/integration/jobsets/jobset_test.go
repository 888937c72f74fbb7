package jobsets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A queued JobSet is suspended by the webhook and gets a Workload with one
// PodSet per replicated job, its WorkloadPriorityClass and maximum
// execution time; once admitted it runs on the flavor. A second JobSet
// waits while quota is short, and is admitted when the first completes. A
// running JobSet's replicated jobs cannot change.
func TestJobSetQueuedAdmittedAndFinished(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns, cq, fl := f.queues("4")

	first := newJobSet(ns, "first", "lq", 2, 1)
	first.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	first.Labels[jobframework.MaxExecTimeSecondsLabel] = "3600"
	f.create(first)
	if !ptr.Deref(first.Spec.Suspend, false) {
		t.Fatal("the webhook must create a queued JobSet suspended")
	}
	var wl *kueue.Workload
	f.eventually("the first JobSet's Workload exists", func() (err error) {
		wl, err = f.workloadOf(first)
		return err
	})
	var got []string
	for _, ps := range wl.Spec.PodSets {
		got = append(got, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	if !slices.Equal(got, []string{"driver=1", "workers=2"}) {
		t.Fatalf("PodSets %v, want driver=1 workers=2", got)
	}
	if ref := wl.Spec.PriorityClassRef; ref == nil || ref.Name != ns+"-high" || ref.Kind != kueue.WorkloadPriorityClassKind || ptr.Deref(wl.Spec.Priority, 0) != 100 {
		t.Fatalf("priority %v %v, want WorkloadPriorityClass %s-high of 100", ref, wl.Spec.Priority, ns)
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
		t.Fatalf("maximumExecutionTimeSeconds %v, want 3600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	if o := metav1.GetControllerOf(wl); o == nil || o.UID != first.UID || o.Kind != "JobSet" {
		t.Fatalf("Workload controller %+v, want the JobSet", o)
	}
	f.waitRunning(ns, "first", fl)
	f.setStatus(ns, "first", active(1))

	second := newJobSet(ns, "second", "lq", 2, 1)
	f.create(second)
	f.eventually("the second JobSet's Workload is pending", func() error {
		wl, err := f.workloadOf(second)
		if err != nil {
			return err
		}
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	if js := f.get(ns, "second"); !ptr.Deref(js.Spec.Suspend, false) {
		t.Fatal("a JobSet that does not fit must stay suspended")
	}

	// Bad input: the running JobSet's workers grow.
	js := f.get(ns, "first")
	js.Spec.ReplicatedJobs[1].Replicas = 3
	err := f.c.Update(ctx, js)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicatedJobs[1].replicas") || !strings.Contains(err.Error(), "while the JobSet runs") {
		t.Fatalf("growing a running JobSet: %v, want Invalid naming spec.replicatedJobs[1].replicas", err)
	}

	// The JobSet controller reports the first JobSet completed.
	f.setStatus(ns, "first", completed)
	f.eventually("the first Workload finished and the quota released", func() error {
		wl, err := f.workloadOf(first)
		if err != nil {
			return err
		}
		if c := condition(wl, kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadFinishedSucceeded || c.Message != "jobset completed successfully" {
			return fmt.Errorf("Finished %+v", c)
		}
		if len(wl.Finalizers) != 0 {
			return fmt.Errorf("finalizers %v", wl.Finalizers)
		}
		return nil
	})
	f.waitRunning(ns, "second", fl)
	f.eventually("the ClusterQueue reserves for the second JobSet only", func() error {
		var q kueue.ClusterQueue
		if err := f.c.Get(ctx, client.ObjectKey{Name: cq}, &q); err != nil {
			return err
		}
		if q.Status.ReservingWorkloads != 1 {
			return fmt.Errorf("reserving for %d workloads", q.Status.ReservingWorkloads)
		}
		return nil
	})
}

// A JobSet in a namespace with a "default" LocalQueue is queued there; a
// higher-priority JobSet preempts it: it is suspended, its templates are
// restored once its Jobs have no pods, its Workload is requeued, and it
// is admitted again once the preemptor completes. The child Jobs the
// JobSet controller creates are not queued on their own.
func TestPreemptedJobSetIsRestoredAndReadmitted(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns, _, fl := f.queues("3")

	low := newJobSet(ns, "low", "", 2, 1)
	f.create(low)
	if low.Labels[jobframework.QueueNameLabel] != jobframework.DefaultLocalQueueName || !ptr.Deref(low.Spec.Suspend, false) {
		t.Fatalf("labels %v suspend %v: want the default LocalQueue, suspended", low.Labels, low.Spec.Suspend)
	}
	low = f.waitRunning(ns, "low", fl)
	f.setStatus(ns, "low", active(1))

	// What the JobSet controller creates: a child Job it controls, with
	// the replicated job's template. It must run as is.
	child := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "low-workers-0",
			Labels: map[string]string{jobsetapi.JobSetNameKey: "low", jobsetapi.JobSetUIDKey: string(low.UID)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: jobsetapi.GroupVersion.String(), Kind: "JobSet", Name: "low", UID: low.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: *low.Spec.ReplicatedJobs[1].Template.Spec.DeepCopy(),
	}
	f.create(child)
	if ptr.Deref(child.Spec.Suspend, false) || child.Labels[jobframework.QueueNameLabel] != "" {
		t.Fatalf("a JobSet's child Job was queued on its own: suspend %v labels %v", child.Spec.Suspend, child.Labels)
	}

	high := newJobSet(ns, "high", "lq", 2, 1)
	high.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	f.create(high)
	f.eventually("the low JobSet is suspended", func() error {
		if js := f.get(ns, "low"); !ptr.Deref(js.Spec.Suspend, false) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	// Its pods still go away: the templates stay as admitted meanwhile.
	time.Sleep(500 * time.Millisecond)
	if err := onFlavor(f.get(ns, "low"), fl); err != nil {
		t.Fatalf("templates changed while the Jobs still had pods: %v", err)
	}
	f.setStatus(ns, "low", active(0))
	f.eventually("the low JobSet's templates restored and its Workload requeued", func() error {
		js := f.get(ns, "low")
		for _, rj := range js.Spec.ReplicatedJobs {
			spec := rj.Template.Spec.Template.Spec
			if len(spec.NodeSelector) != 1 || spec.NodeSelector["team"] != "ml" || len(spec.Tolerations) != 0 || len(rj.Template.Spec.Template.Labels) != 0 {
				return fmt.Errorf("replicated job %s: node selector %v tolerations %v labels %v", rj.Name, spec.NodeSelector, spec.Tolerations, rj.Template.Spec.Template.Labels)
			}
		}
		wl, err := f.workloadOf(js)
		if err != nil {
			return err
		}
		if wl.Status.Admission != nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
			return fmt.Errorf("admission %v, Evicted %+v", wl.Status.Admission, condition(wl, kueue.WorkloadEvicted))
		}
		return nil
	})
	f.waitRunning(ns, "high", fl)

	f.setStatus(ns, "high", completed)
	f.waitRunning(ns, "low", fl)
	wl, err := f.workloadOf(low)
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(wl, kueue.WorkloadAdmitted); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("the low Workload after re-admission: Admitted %+v", c)
	}
	var childWL kueue.Workload
	err = f.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(child.Name, child.UID, batchjob.GVK)}, &childWL)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("the child Job must have no Workload of its own: %v", err)
	}
}

// The generic reconciler finds a JobSet's pods by the JobSet's UID label:
// a Workload whose JobSet was deleted keeps its finalizer (and quota)
// while such a pod runs.
func TestDeletedJobSetKeepsQuotaWhileItsPodsRun(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns, _, fl := f.queues("3")
	js := newJobSet(ns, "gone", "lq", 1, 1)
	f.create(js)
	f.waitRunning(ns, "gone", fl)
	wl, err := f.workloadOf(js)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gone-workers-0-0", Finalizers: []string{"test.kuota.dev/hold"},
			Labels: map[string]string{jobsetapi.JobSetUIDKey: string(js.UID)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
	}
	f.create(pod)
	if err := f.c.Delete(ctx, f.get(ns, "gone"), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	var got kueue.Workload
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(wl), &got); err != nil || !slices.Contains(got.Finalizers, kueue.ResourceInUseFinalizerName) {
		t.Fatalf("while the JobSet's pod terminates, its Workload must stay with its finalizer: %v %v", err, got.Finalizers)
	}
	pod.Finalizers = nil
	f.eventually("pod released", func() error {
		var p corev1.Pod
		if err := f.c.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return client.IgnoreNotFound(err)
		}
		p.Finalizers = nil
		return f.c.Update(ctx, &p)
	})
	f.eventually("the Workload goes once the pod is gone", func() error {
		err := f.c.Get(ctx, client.ObjectKeyFromObject(wl), &got)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v), finalizers %v", err, got.Finalizers)
	})
}
