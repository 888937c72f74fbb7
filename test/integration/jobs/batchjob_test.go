package jobs

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A Job with a queue name gets a Workload it owns, is started with its
// flavor's node label and toleration once admitted, and gives its quota
// back when it completes.
func TestJobRunsAfterAdmissionAndReleasesQuota(t *testing.T) {
	startManager(t)
	ns, cq, fl := queues(t, "4")
	create(t, newJob(ns, "train", "lq", 2, "1"))

	var wl *kueue.Workload
	eventually(t, "the Job's Workload exists", func() error {
		if wl = workloadOf(t, getJob(t, ns, "train")); wl == nil {
			return fmt.Errorf("no Workload")
		}
		return nil
	})
	j := getJob(t, ns, "train")
	if ref := wl.OwnerReferences; len(ref) != 1 || ref[0].UID != j.UID || !ptr.Deref(ref[0].Controller, false) {
		t.Fatalf("owner references %+v", ref)
	}
	if wl.Labels[jobframework.JobUIDLabel] != string(j.UID) || wl.Spec.QueueName != "lq" || wl.Spec.PodSets[0].Count != 2 {
		t.Fatalf("workload %+v", wl.ObjectMeta.Labels)
	}
	if !slices.Equal(wl.Finalizers, []string{kueue.ResourceInUseFinalizerName}) {
		t.Fatalf("finalizers %v, want %s", wl.Finalizers, kueue.ResourceInUseFinalizerName)
	}

	j = waitRunning(t, ns, "train", fl)
	tpl := j.Spec.Template
	if len(tpl.Spec.Tolerations) != 1 || tpl.Labels[jobframework.PodSetLabel] != "main" || tpl.Annotations[jobframework.WorkloadAnnotation] != wl.Name {
		t.Fatalf("started template %+v", tpl)
	}

	setJobStatus(t, ns, "train", func(st *batchv1.JobStatus) {
		st.StartTime, st.Active, st.Ready = ptr.To(metav1.Now()), 2, ptr.To[int32](2)
	})
	eventually(t, "PodsReady recorded", func() error {
		if c := condition(workloadOf(t, j), kueue.WorkloadPodsReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("PodsReady %+v", c)
		}
		return nil
	})
	complete(t, ns, "train")
	eventually(t, "Workload finished, without finalizer, and quota released", func() error {
		wl := workloadOf(t, j)
		if c := condition(wl, kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadFinishedSucceeded {
			return fmt.Errorf("Finished %+v", c)
		}
		if len(wl.Finalizers) != 0 {
			return fmt.Errorf("finalizers %v", wl.Finalizers)
		}
		var q kueue.ClusterQueue
		if err := env.Client.Get(t.Context(), objectKey("", cq), &q); err != nil {
			return err
		}
		if q.Status.ReservingWorkloads != 0 {
			return fmt.Errorf("ClusterQueue still reserves for %d workloads", q.Status.ReservingWorkloads)
		}
		return nil
	})
}

// A high-priority Job preempts a running low-priority one: the victim is
// suspended with its template restored, its reservation is cleared once
// its pods are gone, and it runs again when the preemptor completes.
func TestPreemptedJobIsSuspendedRestoredAndRequeued(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "2")
	create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 100})
	create(t, newJob(ns, "low", "lq", 2, "1"))
	waitRunning(t, ns, "low", fl)
	setJobStatus(t, ns, "low", func(st *batchv1.JobStatus) { st.StartTime, st.Active = ptr.To(metav1.Now()), 2 })

	high := newJob(ns, "high", "lq", 2, "1")
	high.Labels[jobframework.PriorityClassLabel] = ns + "-high"
	create(t, high)
	eventually(t, "the low-priority Job is suspended", func() error {
		if !ptr.Deref(getJob(t, ns, "low").Spec.Suspend, false) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	// Its pods are still there: the quota stays held and the preemptor waits.
	if !ptr.Deref(getJob(t, ns, "high").Spec.Suspend, false) {
		t.Fatal("the preemptor started while the victim's pods still run")
	}
	// The Job controller deletes the pods and resets startTime.
	setJobStatus(t, ns, "low", func(st *batchv1.JobStatus) { st.Active, st.StartTime = 0, nil })
	eventually(t, "the low-priority Job's template is restored", func() error {
		j := getJob(t, ns, "low")
		if len(j.Spec.Template.Spec.NodeSelector) != 0 || len(j.Spec.Template.Spec.Tolerations) != 0 {
			return fmt.Errorf("template not restored: %+v", j.Spec.Template.Spec)
		}
		return nil
	})
	waitRunning(t, ns, "high", fl)
	eventually(t, "the victim is requeued", func() error {
		wl := workloadOf(t, getJob(t, ns, "low"))
		if c := condition(wl, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionTrue || wl.Status.Admission != nil {
			return fmt.Errorf("Requeued %+v admission %v", c, wl.Status.Admission)
		}
		return nil
	})
	complete(t, ns, "high")
	waitRunning(t, ns, "low", fl)
}

// A Job without a queue name is left alone; one naming a missing
// LocalQueue stays suspended with a clear condition on its Workload.
func TestUnmanagedAndMisconfiguredJobs(t *testing.T) {
	startManager(t)
	ns, _, _ := queues(t, "2")
	plain := newJob(ns, "plain", "", 1, "1")
	plain.Spec.Suspend = ptr.To(false)
	create(t, plain, newJob(ns, "lost", "no-such-queue", 1, "1"))
	eventually(t, "the misconfigured Job's Workload explains itself", func() error {
		wl := workloadOf(t, getJob(t, ns, "lost"))
		if wl == nil {
			return fmt.Errorf("no Workload")
		}
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Reason != kueue.WorkloadReasonMisconfigured {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	if !ptr.Deref(getJob(t, ns, "lost").Spec.Suspend, false) {
		t.Fatal("a Job whose queue does not exist must stay suspended")
	}
	j := getJob(t, ns, "plain")
	if ptr.Deref(j.Spec.Suspend, false) || workloadOf(t, j) != nil {
		t.Fatal("a Job without a queue name must be left alone")
	}
}

// A Job with a minimum parallelism runs smaller when the whole does not
// fit.
func TestPartialAdmissionRunsSmallerParallelism(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "3")
	j := newJob(ns, "wide", "lq", 5, "1")
	j.Annotations = map[string]string{batchjob.MinParallelismAnnotation: "2"}
	create(t, j)
	got := waitRunning(t, ns, "wide", fl)
	if p := ptr.Deref(got.Spec.Parallelism, 0); p != 3 {
		t.Fatalf("parallelism %d, want the 3 that fit", p)
	}
}

// A Job naming a prebuilt Workload waits for it, adopts it, and runs when
// it is admitted; no other Workload is created.
func TestJobUsesItsPrebuiltWorkload(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "4")
	j := newJob(ns, "pre", "lq", 1, "1")
	j.Labels[jobframework.PrebuiltWorkloadLabel] = "ready-made"
	create(t, j)
	afterCycles(t, func() error {
		if wl := workloadOf(t, getJob(t, ns, "pre")); wl != nil {
			return fmt.Errorf("a Job with a prebuilt Workload name must not get a Workload of its own")
		}
		return nil
	})
	podSets, err := batchjob.New(getJob(t, ns, "pre")).PodSets()
	if err != nil {
		t.Fatal(err)
	}
	create(t, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ready-made"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: podSets}})
	waitRunning(t, ns, "pre", fl)
	var wl kueue.Workload
	if err := env.Client.Get(t.Context(), objectKey(ns, "ready-made"), &wl); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(&wl, getJob(t, ns, "pre")) {
		t.Fatalf("the prebuilt Workload is not owned by its Job: %+v", wl.OwnerReferences)
	}
}

// testPodFinalizer stands in for a long termination grace period: a pod
// carrying it stays, terminating, until the test removes it.
const testPodFinalizer = "test.kuota.dev/terminating"

// A running Job deleted while its pods terminate keeps its quota until
// the pods are gone: the next Job waits. Then the Workload loses its
// finalizer and goes (no garbage collector runs here: the reconciler
// deletes the Workload of a job that is gone), and the next Job runs.
func TestDeletedJobHoldsQuotaUntilItsPodsAreGone(t *testing.T) {
	startManager(t)
	ns, cq, fl := queues(t, "2")
	create(t, newJob(ns, "first", "lq", 2, "1"))
	j := waitRunning(t, ns, "first", fl)
	wl := workloadOf(t, j)
	if !slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) {
		t.Fatalf("the Workload has finalizers %v, want %s", wl.Finalizers, kueue.ResourceInUseFinalizerName)
	}
	setJobStatus(t, ns, "first", func(st *batchv1.JobStatus) {
		st.StartTime, st.Active, st.Ready = ptr.To(metav1.Now()), 2, ptr.To[int32](2)
	})
	// The Job controller's pods, created by hand: there is none here.
	var pods []*corev1.Pod
	for i := range 2 {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("first-%d", i), Finalizers: []string{testPodFinalizer},
				Labels: map[string]string{batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *j.Spec.Template.Spec.DeepCopy(),
		}
		create(t, p)
		pods = append(pods, p)
	}

	if err := env.Client.Delete(t.Context(), j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if err := env.Client.Delete(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	create(t, newJob(ns, "second", "lq", 2, "1"))
	eventually(t, "the second Job waits for quota", func() error {
		wl := workloadOf(t, getJob(t, ns, "second"))
		if wl == nil {
			return fmt.Errorf("no Workload")
		}
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	// A few more scheduling cycles: nothing changes while the pods terminate.
	afterCycles(t, func() error {
		if held := workloadOf(t, j); held == nil || !slices.Contains(held.Finalizers, kueue.ResourceInUseFinalizerName) {
			return fmt.Errorf("while the pods terminate, the Workload must stay with its finalizer")
		}
		return nil
	})
	held := workloadOf(t, j)
	if held == nil || !slices.Contains(held.Finalizers, kueue.ResourceInUseFinalizerName) {
		t.Fatalf("while the pods terminate, the Workload must stay with its finalizer (there: %v)", held != nil)
	}
	if !ptr.Deref(getJob(t, ns, "second").Spec.Suspend, false) {
		t.Fatal("the second Job started while the first one's pods still terminate")
	}
	var q kueue.ClusterQueue
	if err := env.Client.Get(t.Context(), objectKey("", cq), &q); err != nil {
		t.Fatal(err)
	}
	if q.Status.ReservingWorkloads != 1 {
		t.Fatalf("the ClusterQueue reserves for %d workloads, want the deleted Job's", q.Status.ReservingWorkloads)
	}

	for _, p := range pods {
		eventually(t, "pod "+p.Name+" released", func() error {
			var cur corev1.Pod
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(p), &cur); err != nil {
				return client.IgnoreNotFound(err)
			}
			cur.Finalizers = nil
			return env.Client.Update(t.Context(), &cur)
		})
	}
	eventually(t, "the deleted Job's Workload is gone", func() error {
		if wl := workloadOf(t, j); wl != nil {
			return fmt.Errorf("still there: finalizers %v, deleting %v", wl.Finalizers, wl.DeletionTimestamp)
		}
		return nil
	})
	waitRunning(t, ns, "second", fl)
}

// A Job whose pods succeed before their readiness was ever recorded does
// not leave its finished Workload "waiting for start".
func TestFinishedJobIsNotLeftWaitingForStart(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "4")
	create(t, newJob(ns, "quick", "lq", 1, "1"))
	j := waitRunning(t, ns, "quick", fl)
	setJobStatus(t, ns, "quick", func(st *batchv1.JobStatus) {
		st.StartTime, st.Active, st.Ready = ptr.To(metav1.Now()), 1, ptr.To[int32](0)
	})
	eventually(t, "PodsReady=False while the pod starts", func() error {
		if c := condition(workloadOf(t, j), kueue.WorkloadPodsReady); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("PodsReady %+v", c)
		}
		return nil
	})
	complete(t, ns, "quick")
	eventually(t, "finished with PodsReady=True", func() error {
		wl := workloadOf(t, j)
		if c := condition(wl, kueue.WorkloadFinished); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Finished %+v", c)
		}
		if c := condition(wl, kueue.WorkloadPodsReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("PodsReady %+v beside Finished", c)
		}
		return nil
	})
}

// A Workload finished by someone else while its Job still waits is over:
// the manager neither replaces it (its cached copy lacks the pod templates)
// nor starts the Job.
func TestFinishedWorkloadOfAWaitingJobIsLeftAlone(t *testing.T) {
	startManager(t)
	ns, _, _ := queues(t, "2")
	create(t, newJob(ns, "waiting", "no-such-queue", 1, "1"))
	var wl *kueue.Workload
	eventually(t, "the Job's Workload exists", func() error {
		if wl = workloadOf(t, getJob(t, ns, "waiting")); wl == nil {
			return fmt.Errorf("no Workload")
		}
		return nil
	})
	eventually(t, "the Workload is marked finished", func() error {
		cur := workloadOf(t, getJob(t, ns, "waiting"))
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
			Reason: kueue.WorkloadFinishedFailed, Message: "finished by an administrator"})
		return env.Client.Status().Update(context.Background(), cur)
	})
	afterCycles(t, func() error {
		j := getJob(t, ns, "waiting")
		got := workloadOf(t, j)
		switch {
		case got == nil || got.UID != wl.UID:
			return fmt.Errorf("the finished Workload was replaced or deleted")
		case !ptr.Deref(j.Spec.Suspend, false):
			return fmt.Errorf("the Job was started")
		case condition(got, kueue.WorkloadFinished) == nil:
			return fmt.Errorf("the Workload is no longer finished")
		}
		return nil
	})
	// The reconciler has seen the finished copy by now; a few more cycles
	// must not change the picture.
	time.Sleep(time.Second)
	if got := workloadOf(t, getJob(t, ns, "waiting")); got == nil || got.UID != wl.UID {
		t.Fatal("the finished Workload was replaced")
	}
}
