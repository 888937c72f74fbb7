package batchjob

import (
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// testPodFinalizer stands in for a long termination grace period: a pod
// carrying it stays, being deleted, until the test removes it.
const testPodFinalizer = "test.kuota.dev/hold"

// finalizerFixture is a job reconciler over a fake client.
type finalizerFixture struct {
	t   *testing.T
	c   client.Client
	r   *jobframework.Reconciler
	rec *record.FakeRecorder
}

func newFinalizerFixture(t *testing.T, integration jobframework.Integration, objs ...client.Object) *finalizerFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&kueue.Workload{}, &batchv1.Job{}).
		WithIndex(&kueue.Workload{}, jobframework.IndexWorkloadJob, jobframework.IndexWorkloadByJob).Build()
	rec := record.NewFakeRecorder(100)
	r := &jobframework.Reconciler{Client: c, APIReader: c, Writer: &apply.Writer{Client: c}, Recorder: rec, Integration: integration}
	return &finalizerFixture{t: t, c: c, r: r, rec: rec}
}

func batchIntegration() jobframework.Integration {
	return jobframework.Integration{Name: "batch/job", GVK: GVK, NewJob: New}
}

// withoutPodSelector hides PodSelector, so that pods are found by their
// controller owner reference.
type withoutPodSelector struct{ jobframework.Job }

func plainIntegration() jobframework.Integration {
	in := batchIntegration()
	in.NewJob = func(obj client.Object) jobframework.Job { return withoutPodSelector{New(obj)} }
	return in
}

func (f *finalizerFixture) reconcile(name string) ctrl.Result {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}})
	if err != nil {
		f.t.Fatalf("reconcile: %v", err)
	}
	return res
}

// workload reads a Workload; nil when it is gone.
func (f *finalizerFixture) workload(name string) *kueue.Workload {
	f.t.Helper()
	var wl kueue.Workload
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		f.t.Fatal(err)
	}
	return &wl
}

func (f *finalizerFixture) delete(obj client.Object) {
	f.t.Helper()
	if err := f.c.Delete(context.Background(), obj); err != nil {
		f.t.Fatal(err)
	}
}

// release removes the test finalizer from a pod being deleted: it goes.
func (f *finalizerFixture) release(pod *corev1.Pod) {
	f.t.Helper()
	var p corev1.Pod
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(pod), &p); err != nil {
		f.t.Fatal(err)
	}
	p.Finalizers = nil
	if err := f.c.Update(context.Background(), &p); client.IgnoreNotFound(err) != nil {
		f.t.Fatal(err)
	}
}

func queuedJob(name string, uid types.UID) *batchv1.Job {
	j := newJob(ptr.To[int32](1), ptr.To[int32](1))
	j.Name, j.UID = name, uid
	j.Labels = map[string]string{jobframework.QueueNameLabel: "lq"}
	return j
}

// jobWorkload is the Workload of a job as the reconciler creates it,
// admitted, with the finalizer.
func jobWorkload(t *testing.T, j *batchv1.Job) *kueue.Workload {
	t.Helper()
	wl, err := jobframework.NewWorkload(context.Background(), nil, New(j), GVK, jobframework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1)}}}
	now := metav1.Now()
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: now},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: now},
	}
	return wl
}

// jobPod is a pod the Job controller made for j, held by the test
// finalizer.
func jobPod(name string, j *batchv1.Job, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: name, Finalizers: []string{testPodFinalizer},
			Labels: map[string]string{batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func hasFinalizer(wl *kueue.Workload) bool {
	return wl != nil && slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName)
}

func TestNewWorkloadCarriesTheFinalizer(t *testing.T) {
	j := queuedJob("j", "uid-1")
	f := newFinalizerFixture(t, batchIntegration(), j)
	f.reconcile("j")
	wl := f.workload(jobframework.WorkloadName("j", "uid-1", GVK))
	if !hasFinalizer(wl) {
		t.Fatalf("the new Workload %v has finalizers %v, want %s", wl != nil, wl.Finalizers, kueue.ResourceInUseFinalizerName)
	}
}

func TestOlderWorkloadGetsTheFinalizer(t *testing.T) {
	j := queuedJob("j", "uid-1")
	wl := jobWorkload(t, j)
	wl.Finalizers = nil
	f := newFinalizerFixture(t, batchIntegration(), j, wl)
	f.reconcile("j")
	if !hasFinalizer(f.workload(wl.Name)) {
		t.Fatal("a Workload created without the finalizer must get it")
	}
}

func TestFinishedWorkloadLosesTheFinalizer(t *testing.T) {
	j := queuedJob("j", "uid-1")
	j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	wl := jobWorkload(t, j)
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished,
		Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedSucceeded, LastTransitionTime: metav1.Now()})
	f := newFinalizerFixture(t, batchIntegration(), j, wl)
	f.reconcile("j")
	got := f.workload(wl.Name)
	if got == nil || hasFinalizer(got) {
		t.Fatalf("a finished Workload must stay, without the finalizer: %+v", got)
	}
	f.reconcile("j")
	if hasFinalizer(f.workload(wl.Name)) {
		t.Fatal("the finalizer came back on a finished Workload")
	}
}

// The job is deleted while a pod is terminating: the Workload keeps its
// finalizer (and with it the quota) until the pod is gone, then it goes.
func testDeletedJobWaitsForItsPods(t *testing.T, integration jobframework.Integration) {
	j := queuedJob("j", "uid-1")
	j.Spec.Suspend = ptr.To(false)
	wl := jobWorkload(t, j)
	terminating := jobPod("j-a", j, corev1.PodRunning)
	done := jobPod("j-b", j, corev1.PodSucceeded)
	failed := jobPod("j-c", j, corev1.PodFailed)
	other := jobPod("other", queuedJob("other", "uid-2"), corev1.PodRunning)
	f := newFinalizerFixture(t, integration, j, wl, terminating, done, failed, other)
	f.delete(j)
	f.delete(terminating)

	res := f.reconcile("j")
	if got := f.workload(wl.Name); !hasFinalizer(got) || !got.DeletionTimestamp.IsZero() {
		t.Fatalf("while a pod terminates, the Workload must stay, with its finalizer: %+v", got)
	}
	if res.RequeueAfter == 0 {
		t.Fatal("while a pod terminates, the reconciler must look again later")
	}

	f.release(terminating)
	if res := f.reconcile("j"); res.RequeueAfter != 0 {
		t.Fatalf("result %+v once the pods are gone", res)
	}
	if got := f.workload(wl.Name); got != nil {
		t.Fatalf("the Workload of a deleted job must go once its pods are gone: %+v", got.ObjectMeta)
	}
	select {
	case e := <-f.rec.Events:
		if e != "Normal "+jobframework.ReleasedReason+" The job's pods are gone; the quota is released" {
			t.Errorf("event %q", e)
		}
	default:
		t.Error("no event for the released Workload")
	}
}

func TestDeletedJobWaitsForItsPods(t *testing.T) {
	t.Run("by label", func(t *testing.T) { testDeletedJobWaitsForItsPods(t, batchIntegration()) })
	t.Run("by owner reference", func(t *testing.T) { testDeletedJobWaitsForItsPods(t, plainIntegration()) })
}

// The Workload being deleted (by garbage collection or a user) while its
// job still exists: the job is stopped first, and the finalizer goes
// once the pods are gone.
func TestDeletedWorkloadOfLiveJobWaitsForItsPods(t *testing.T) {
	j := queuedJob("j", "uid-1")
	j.Spec.Suspend = ptr.To(false)
	j.Status.Active = 1
	wl := jobWorkload(t, j)
	pod := jobPod("j-a", j, corev1.PodRunning)
	f := newFinalizerFixture(t, batchIntegration(), j, wl, pod)
	f.delete(wl)

	f.reconcile("j")
	var got batchv1.Job
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(j), &got); err != nil || !ptr.Deref(got.Spec.Suspend, false) {
		t.Fatalf("the job must be suspended first: %v %v", got.Spec.Suspend, err)
	}
	f.reconcile("j")
	if !hasFinalizer(f.workload(wl.Name)) {
		t.Fatal("the finalizer must stay while the job reports active pods")
	}

	// The Job controller is deleting the pod: the job reports none active,
	// but the pod still terminates.
	got.Status.Active = 0
	if err := f.c.Status().Update(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	f.delete(pod)
	for range 3 { // restore the template, then look at the pods
		f.reconcile("j")
	}
	if got := f.workload(wl.Name); !hasFinalizer(got) || got.DeletionTimestamp.IsZero() {
		t.Fatalf("the deleted Workload must stay, with its finalizer, while a pod terminates: %+v", got)
	}
	f.release(pod)
	f.reconcile("j")
	if got := f.workload(wl.Name); got != nil {
		t.Fatalf("the Workload must go once the pods are gone: %+v", got.ObjectMeta)
	}
}

// A Workload of a job that is gone (deleted while the manager was down,
// or where no garbage collector runs) is finalized and deleted; so is the
// Workload of an earlier job of the same name.
func TestOrphanedWorkloadsAreFinalizedAndDeleted(t *testing.T) {
	gone := queuedJob("gone", "uid-gone")
	old := queuedJob("again", "uid-old")
	again := queuedJob("again", "uid-new")
	goneWL, oldWL := jobWorkload(t, gone), jobWorkload(t, old)
	f := newFinalizerFixture(t, batchIntegration(), again, goneWL, oldWL)
	f.reconcile("gone")
	if got := f.workload(goneWL.Name); got != nil {
		t.Fatalf("the Workload of a job that is gone must be deleted: %+v", got.ObjectMeta)
	}
	f.reconcile("again")
	if got := f.workload(oldWL.Name); got != nil {
		t.Fatalf("the Workload of the earlier job must be deleted: %+v", got.ObjectMeta)
	}
	if !hasFinalizer(f.workload(jobframework.WorkloadName("again", "uid-new", GVK))) {
		t.Fatal("the recreated job must get its own Workload")
	}
}

// A Workload left without owner (its job was deleted with orphan
// propagation) keeps its finalizer until it is deleted; the workload
// controller releases its quota at deletion, and the finalizer goes.
func TestOwnerlessWorkloadLosesTheFinalizerWhenDeleted(t *testing.T) {
	j := queuedJob("j", "uid-1")
	wl := jobWorkload(t, j)
	wl.OwnerReferences = nil
	pod := jobPod("j-a", j, corev1.PodRunning)
	f := newFinalizerFixture(t, batchIntegration(), wl, pod)
	f.reconcile("j")
	if got := f.workload(wl.Name); !hasFinalizer(got) || !got.DeletionTimestamp.IsZero() {
		t.Fatalf("an ownerless Workload is left alone until deleted: %+v", got)
	}
	f.delete(wl)
	f.reconcile("j")
	if got := f.workload(wl.Name); got != nil {
		t.Fatalf("a deleted ownerless Workload must go: %+v", got.ObjectMeta)
	}
}

// A Workload left without owner (its job was deleted with orphan
// propagation) is finished with OwnerNotFound once the job's pods are
// gone, and then loses its finalizer: its quota returns.
func TestOwnerlessWorkloadIsFinishedOncePodsAreGone(t *testing.T) {
	j := queuedJob("j", "uid-1")
	wl := jobWorkload(t, j)
	wl.OwnerReferences = nil
	pod := jobPod("j-a", j, corev1.PodRunning)
	pod.OwnerReferences = nil // orphaned too
	f := newFinalizerFixture(t, batchIntegration(), wl, pod)

	if res := f.reconcile("j"); res.RequeueAfter == 0 {
		t.Fatal("while the job's pod runs, the reconciler must look again later")
	}
	if c := meta.FindStatusCondition(f.workload(wl.Name).Status.Conditions, kueue.WorkloadFinished); c != nil {
		t.Fatalf("finished while the job's pod still runs: %+v", c)
	}

	f.delete(pod)
	f.release(pod)
	f.reconcile("j")
	got := f.workload(wl.Name)
	c := meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadFinished)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.WorkloadFinishedOwnerNotFound ||
		!strings.HasPrefix(c.Message, jobframework.OrphanFinishedMessage) {
		t.Fatalf("Finished %+v, want True with reason %s", c, kueue.WorkloadFinishedOwnerNotFound)
	}
	f.reconcile("j")
	if got := f.workload(wl.Name); got == nil || hasFinalizer(got) {
		t.Fatalf("the finished ownerless Workload must stay, without the finalizer: %+v", got)
	}
}

func TestPodSelectorUsesTheControllerUID(t *testing.T) {
	sel := New(nil).(jobframework.JobWithPodSelector).PodSelector("abc")
	if got := sel.String(); got != batchv1.ControllerUidLabel+"=abc" {
		t.Fatalf("selector %q", got)
	}
}
