package appwrappers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A queued AppWrapper is suspended by the webhook and gets a Workload with
// one PodSet per pod set of its components ("<name>-<i>"), its
// WorkloadPriorityClass and maximum execution time; once admitted its
// components' podSetInfos carry the flavor and it is resumed. A second
// AppWrapper waits while quota is short, and is admitted when the first
// succeeds. Bad AppWrappers are refused with an error naming the field.
func TestAppWrapperQueuedAdmittedAndFinished(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns, cq, fl := f.queues("4")

	first := f.newAppWrapper(ns, "first", "lq", 2, 1)
	first.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	first.Labels[jobframework.MaxExecTimeSecondsLabel] = "3600"
	f.create(first)
	if !first.Spec.Suspend {
		t.Fatal("the webhook must create a queued AppWrapper suspended")
	}
	var wl *kueue.Workload
	f.eventually("the first AppWrapper's Workload exists", func() (err error) {
		wl, err = f.workloadOf(first)
		return err
	})
	var got []string
	for _, ps := range wl.Spec.PodSets {
		got = append(got, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	if !slices.Equal(got, []string{"first-0=2", "first-1=1"}) {
		t.Fatalf("PodSets %v, want first-0=2 first-1=1", got)
	}
	if ref := wl.Spec.PriorityClassRef; ref == nil || ref.Name != ns+"-high" || ref.Kind != kueue.WorkloadPriorityClassKind || ptr.Deref(wl.Spec.Priority, 0) != 100 {
		t.Fatalf("priority %v %v, want WorkloadPriorityClass %s-high of 100", ref, wl.Spec.Priority, ns)
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
		t.Fatalf("maximumExecutionTimeSeconds %v, want 3600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	if o := metav1.GetControllerOf(wl); o == nil || o.UID != first.UID || o.Kind != "AppWrapper" {
		t.Fatalf("Workload controller %+v, want the AppWrapper", o)
	}
	f.waitRunning(ns, "first", fl)
	f.setStatus(ns, "first", quotaReserved(true))

	second := f.newAppWrapper(ns, "second", "lq", 1, 1)
	f.create(second)
	f.eventually("the second AppWrapper's Workload is pending", func() error {
		wl, err := f.workloadOf(second)
		if err != nil {
			return err
		}
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	if aw := f.get(ns, "second"); !aw.Spec.Suspend || aw.Spec.Components[0].PodSetInfos != nil {
		t.Fatalf("an AppWrapper that does not fit must stay suspended without podSetInfos: suspend %v", aw.Spec.Suspend)
	}

	// Bad input: the running AppWrapper's Deployment grows; a new one's pod
	// set path leads nowhere.
	aw := f.get(ns, "first")
	aw.Spec.Components[1].DeclaredPodSets[0].Replicas = ptr.To[int32](3)
	err := f.c.Update(ctx, aw)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.components") || !strings.Contains(err.Error(), "while the AppWrapper runs") {
		t.Fatalf("growing a running AppWrapper: %v, want Invalid naming spec.components", err)
	}
	bad := f.newAppWrapper(ns, "bad", "lq", 1, 1)
	bad.Spec.Components[1].DeclaredPodSets[0].Path = "template.spec.nothing"
	err = f.c.Create(ctx, bad)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.components[1].podSets[0].path") {
		t.Fatalf("creating an AppWrapper with a bad path: %v, want Invalid naming spec.components[1].podSets[0].path", err)
	}

	// The AppWrapper controller reports the first AppWrapper succeeded.
	f.setStatus(ns, "first", succeeded)
	f.eventually("the first Workload finished and the quota released", func() error {
		wl, err := f.workloadOf(first)
		if err != nil {
			return err
		}
		if c := condition(wl, kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadFinishedSucceeded {
			return fmt.Errorf("Finished %+v", c)
		}
		if len(wl.Finalizers) != 0 {
			return fmt.Errorf("finalizers %v", wl.Finalizers)
		}
		return nil
	})
	f.waitRunning(ns, "second", fl)
	f.eventually("the ClusterQueue reserves for the second AppWrapper only", func() error {
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

// An AppWrapper in a namespace with a "default" LocalQueue is queued
// there; a higher-priority AppWrapper preempts it: it is suspended, its
// podSetInfos are cleared once its controller has deleted the wrapped
// objects (QuotaReserved false), its Workload is requeued, and it is
// admitted again once the preemptor succeeds. The objects it wraps (a
// Job, a Deployment and the pods of its ReplicaSet) are not queued on
// their own, although the namespace has a default LocalQueue.
func TestPreemptedAppWrapperIsRestoredAndReadmitted(t *testing.T) {
	f := start(t)
	ctx := context.Background()
	ns, _, fl := f.queues("3")

	low := f.newAppWrapper(ns, "low", "", 1, 1)
	f.create(low)
	if low.Labels[jobframework.QueueNameLabel] != jobframework.DefaultLocalQueueName || !low.Spec.Suspend {
		t.Fatalf("labels %v suspend %v: want the default LocalQueue, suspended", low.Labels, low.Spec.Suspend)
	}
	low = f.waitRunning(ns, "low", fl)
	f.setStatus(ns, "low", quotaReserved(true))

	// What the AppWrapper controller creates: the wrapped objects, which it
	// controls. They must be created as they are.
	job, deploy := wrappedJob("low-job", 1), wrappedDeployment("low-deploy", 1)
	ownedBy(job, low)
	ownedBy(deploy, low)
	f.create(job, deploy)
	if ptr.Deref(job.Spec.Suspend, false) || job.Labels[jobframework.QueueNameLabel] != "" {
		t.Fatalf("a wrapped Job was queued on its own: suspend %v labels %v", job.Spec.Suspend, job.Labels)
	}
	if deploy.Labels[jobframework.QueueNameLabel] != "" || deploy.Spec.Template.Annotations[jobframework.SuspendingParentAnnotation] != "" ||
		deploy.Spec.Template.Labels[jobframework.ManagedLabel] != "" {
		t.Fatalf("a wrapped Deployment was queued on its own: labels %v, template %v %v", deploy.Labels,
			deploy.Spec.Template.Labels, deploy.Spec.Template.Annotations)
	}

	// The wrapped Deployment's pod (through its ReplicaSet) runs as is too.
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "low-deploy-1", Labels: map[string]string{"app": "w"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: deploy.Name, UID: deploy.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: deploy.Spec.Selector, Template: deploy.Spec.Template}}
	f.create(rs)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "low-deploy-1-a", Labels: map[string]string{"app": "w"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: *deploy.Spec.Template.Spec.DeepCopy()}
	f.create(pod)
	if len(pod.Spec.SchedulingGates) != 0 || pod.Labels[jobframework.QueueNameLabel] != "" || len(pod.Finalizers) != 0 {
		t.Fatalf("a wrapped Deployment's pod was queued on its own: gates %v labels %v finalizers %v", pod.Spec.SchedulingGates, pod.Labels, pod.Finalizers)
	}

	high := f.newAppWrapper(ns, "high", "lq", 1, 1)
	high.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	f.create(high)
	f.eventually("the low AppWrapper is suspended", func() error {
		if aw := f.get(ns, "low"); !aw.Spec.Suspend {
			return fmt.Errorf("still running")
		}
		return nil
	})
	// Its wrapped objects still go away: the podSetInfos stay meanwhile.
	time.Sleep(500 * time.Millisecond)
	if err := onFlavor(f.get(ns, "low"), fl); err != nil {
		t.Fatalf("podSetInfos changed while the wrapped objects still existed: %v", err)
	}
	f.setStatus(ns, "low", quotaReserved(false))
	f.eventually("the low AppWrapper's podSetInfos cleared and its Workload requeued", func() error {
		aw := f.get(ns, "low")
		for i, c := range aw.Spec.Components {
			if c.PodSetInfos != nil {
				return fmt.Errorf("component %d: podSetInfos %+v", i, c.PodSetInfos)
			}
		}
		wl, err := f.workloadOf(aw)
		if err != nil {
			return err
		}
		if wl.Status.Admission != nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
			return fmt.Errorf("admission %v, Evicted %+v", wl.Status.Admission, condition(wl, kueue.WorkloadEvicted))
		}
		return nil
	})
	f.waitRunning(ns, "high", fl)

	f.setStatus(ns, "high", succeeded)
	f.waitRunning(ns, "low", fl)
	wl, err := f.workloadOf(low)
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(wl, kueue.WorkloadAdmitted); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("the low Workload after re-admission: Admitted %+v", c)
	}
	var jobWL kueue.Workload
	err = f.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}, &jobWL)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("the wrapped Job must have no Workload of its own: %v", err)
	}
}

// A Failed AppWrapper finishes its Workload only once its controller has
// deleted its resources (ResourcesDeployed false).
func TestFailedAppWrapperFinishesOnceItsResourcesAreGone(t *testing.T) {
	f := start(t)
	ns, _, fl := f.queues("3")
	aw := f.newAppWrapper(ns, "fails", "lq", 1, 1)
	f.create(aw)
	f.waitRunning(ns, "fails", fl)
	f.setStatus(ns, "fails", func(st *awv1beta2.AppWrapperStatus) {
		st.Phase = awv1beta2.AppWrapperFailed
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionTrue, Reason: "Test"})
	})
	time.Sleep(500 * time.Millisecond)
	wl, err := f.workloadOf(aw)
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(wl, kueue.WorkloadFinished); c != nil && c.Status == metav1.ConditionTrue {
		t.Fatalf("finished while the failed AppWrapper's resources are still deployed: %+v", c)
	}
	f.setStatus(ns, "fails", func(st *awv1beta2.AppWrapperStatus) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: string(awv1beta2.ResourcesDeployed), Status: metav1.ConditionFalse, Reason: "Test"})
	})
	f.eventually("the Workload finished as failed", func() error {
		wl, err := f.workloadOf(aw)
		if err != nil {
			return err
		}
		if c := condition(wl, kueue.WorkloadFinished); c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadFinishedFailed {
			return fmt.Errorf("Finished %+v", c)
		}
		return nil
	})
}
