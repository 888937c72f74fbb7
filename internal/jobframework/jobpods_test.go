package jobframework

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
)

// holdFinalizer stands in for a long termination grace period: a pod
// carrying it stays, being deleted, until the test removes it.
const holdFinalizer = "test.kuota.dev/hold"

// selectorJob is a tasJob whose pods are also found by a label.
type selectorJob struct{ *tasJob }

func (selectorJob) PodSelector(uid types.UID) labels.Selector {
	return labels.SelectorFromSet(labels.Set{"example.com/owner-uid": string(uid)})
}

func tasIntegration(withSelector bool) Integration {
	return Integration{Name: "batch/job", GVK: jobGVK, NewJob: func(obj client.Object) Job {
		j := &tasJob{job: &batchv1.Job{}, count: 1}
		if obj != nil {
			j.job = obj.(*batchv1.Job)
		}
		if withSelector {
			return selectorJob{j}
		}
		return j
	}}
}

// childPod is a pod an operator made for the job with uid through a child
// object (its controller), held by holdFinalizer.
func childPod(name string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-pod-uid"), Finalizers: []string{holdFinalizer},
		Labels: map[string]string{PodJobUIDLabel: string(uid)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: name + "-cluster",
			UID: types.UID(name + "-cluster-uid"), Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// goneJobWorkload is the admitted Workload, with the finalizer, of job
// "j" (UID "uid"), which was deleted.
func goneJobWorkload(t *testing.T) *kueue.Workload {
	t.Helper()
	job := newTASJob(1, nil)
	wl, err := NewWorkload(context.Background(), nil, job, jobGVK, Options{})
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

type podsFixture struct {
	t *testing.T
	c client.Client
	r *Reconciler
}

func newPodsFixture(t *testing.T, in Integration, objs ...client.Object) *podsFixture {
	t.Helper()
	scheme := testScheme(t)
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&kueue.Workload{}).
		WithIndex(&kueue.Workload{}, IndexWorkloadJob, IndexWorkloadByJob).Build()
	r := &Reconciler{Client: c, APIReader: c, Writer: &apply.Writer{Client: c}, Recorder: record.NewFakeRecorder(10), Integration: in}
	return &podsFixture{t: t, c: c, r: r}
}

func (f *podsFixture) reconcile() ctrl.Result {
	f.t.Helper()
	res, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "j"}})
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

// held reports whether the Workload still exists with its finalizer.
func (f *podsFixture) held(wl *kueue.Workload) bool {
	f.t.Helper()
	var got kueue.Workload
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(wl), &got); err != nil {
		if apierrors.IsNotFound(err) {
			return false
		}
		f.t.Fatal(err)
	}
	return hasFinalizer(&got)
}

func (f *podsFixture) deletePod(p *corev1.Pod) {
	f.t.Helper()
	if err := f.c.Delete(context.Background(), p); err != nil {
		f.t.Fatal(err)
	}
}

// releasePod removes holdFinalizer from a pod being deleted: its grace
// period is over, it goes.
func (f *podsFixture) releasePod(p *corev1.Pod) {
	f.t.Helper()
	ctx := context.Background()
	var got corev1.Pod
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
		f.t.Fatal(err)
	}
	got.Finalizers = nil
	if err := f.c.Update(ctx, &got); client.IgnoreNotFound(err) != nil {
		f.t.Fatal(err)
	}
}

// A deleted job's pod made through a child object (controlled by it, not
// by the job) keeps the job's Workload, and its quota, while it runs and
// while it terminates; once it is gone the Workload goes. So with or
// without a PodSelector for the kind.
func TestChildPodsOfADeletedJobHoldItsQuota(t *testing.T) {
	for name, withSelector := range map[string]bool{"by controller": false, "with a pod selector": true} {
		t.Run(name, func(t *testing.T) {
			wl := goneJobWorkload(t)
			pod := childPod("head", "uid")
			f := newPodsFixture(t, tasIntegration(withSelector), wl, pod)
			if res := f.reconcile(); res.RequeueAfter == 0 || !f.held(wl) {
				t.Fatalf("while a pod labelled with the job's UID runs, the Workload must keep its finalizer (requeue %v)", res.RequeueAfter)
			}
			f.deletePod(pod)
			if res := f.reconcile(); res.RequeueAfter == 0 || !f.held(wl) {
				t.Fatalf("while the pod terminates, the Workload must keep its finalizer (requeue %v)", res.RequeueAfter)
			}
			f.releasePod(pod)
			if res := f.reconcile(); res.RequeueAfter != 0 || f.held(wl) {
				t.Fatalf("once the pod is gone the Workload must go (requeue %v)", res.RequeueAfter)
			}
		})
	}
}

// Pods labelled with another job's UID, or ended, hold nothing.
func TestOtherJobsPodsDoNotHoldTheQuota(t *testing.T) {
	wl := goneJobWorkload(t)
	other := childPod("other", "uid-other")
	done := childPod("done", "uid")
	done.Status.Phase = corev1.PodSucceeded
	f := newPodsFixture(t, tasIntegration(false), wl, other, done)
	if res := f.reconcile(); res.RequeueAfter != 0 || f.held(wl) {
		t.Fatalf("pods of another job (or ended) must not hold the Workload (requeue %v)", res.RequeueAfter)
	}
}

// The finder lists each pod once: by the label, by the selector, by the
// controller reference, and none of another job.
func TestListJobPodsIsTheUnionOnce(t *testing.T) {
	labelled := childPod("labelled", "uid")
	selected := childPod("selected", "other")
	selected.Labels = map[string]string{"example.com/owner-uid": "uid"}
	both := childPod("both", "uid")
	both.Labels["example.com/owner-uid"] = "uid"
	controlled := childPod("controlled", "other")
	controlled.Labels = nil
	controlled.OwnerReferences[0].UID = "uid"
	stranger := childPod("stranger", "other")
	f := newPodsFixture(t, tasIntegration(true), labelled, selected, both, controlled, stranger)
	for name, tc := range map[string]struct {
		in   Integration
		want []string
	}{
		"with a selector": {tasIntegration(true), []string{"labelled", "selected", "both"}},
		"without":         {tasIntegration(false), []string{"labelled", "both", "controlled"}},
	} {
		pods, err := ListJobPods(context.Background(), f.c, tc.in, "ns", "uid")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, p := range pods {
			got[p.Name]++
		}
		if len(got) != len(tc.want) || len(pods) != len(tc.want) {
			t.Errorf("%s: pods %v, want %v each once", name, got, tc.want)
		}
		for _, n := range tc.want {
			if got[n] != 1 {
				t.Errorf("%s: pod %s listed %d times, want once", name, n, got[n])
			}
		}
	}
}

// Every PodSet of an admission labels its pods with the job's UID (the
// Workload's controller); a Workload without a controller, or a plain
// pod's own, labels nothing.
func TestAdmissionLabelsPodsWithTheJobUID(t *testing.T) {
	wl := goneJobWorkload(t)
	infos, err := AdmissionInfos(context.Background(), nil, wl)
	if err != nil {
		t.Fatal(err)
	}
	if got := infos[0].Labels[PodJobUIDLabel]; got != "uid" {
		t.Fatalf("label %s=%q, want the job's UID", PodJobUIDLabel, got)
	}
	job := newTASJob(1, nil)
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	if job.job.Spec.Template.Labels[PodJobUIDLabel] != "uid" {
		t.Fatalf("template labels %v", job.job.Spec.Template.Labels)
	}
	if !job.RestorePodSetsInfo(RestoreInfos(wl)) || job.job.Spec.Template.Labels[PodJobUIDLabel] != "" {
		t.Fatalf("restoring must remove the label: %v", job.job.Spec.Template.Labels)
	}

	for name, owners := range map[string][]metav1.OwnerReference{
		"no owner":  nil,
		"plain pod": {{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "pod-uid", Controller: ptr.To(true)}},
	} {
		wl.OwnerReferences = owners
		infos, err := AdmissionInfos(context.Background(), nil, wl)
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := infos[0].Labels[PodJobUIDLabel]; ok {
			t.Errorf("%s: label %s=%q, want none", name, PodJobUIDLabel, v)
		}
	}
}
