package batchjob

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The webhook hands a Job to MultiKueue (spec.managedBy) only when its
// LocalQueue's ClusterQueue has a MultiKueue check.
func TestWebhookDefaultsManagedByForMultiKueueQueues(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := func(name, check string) *kueue.ClusterQueue {
		return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
			AdmissionChecksStrategy: &kueue.AdmissionChecksStrategy{AdmissionChecks: []kueue.AdmissionCheckStrategyRule{{Name: kueue.AdmissionCheckReference(check)}}}}}
	}
	lq := func(name, cq string) *kueue.LocalQueue {
		return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "mk"}, Spec: kueue.AdmissionCheckSpec{ControllerName: jobframework.MultiKueueManagedBy}},
		&kueue.AdmissionCheck{ObjectMeta: metav1.ObjectMeta{Name: "prov"}, Spec: kueue.AdmissionCheckSpec{ControllerName: "kueue.x-k8s.io/provisioning-request"}},
		cq("remote", "mk"), cq("local", "prov"), lq("to-remote", "remote"), lq("to-local", "local"),
	).Build()
	w := &jobframework.Webhook{Client: c, Integration: Integration}
	for queue, want := range map[string]*string{"to-remote": ptr.To(jobframework.MultiKueueManagedBy), "to-local": nil, "missing": nil} {
		job := newJob(ptr.To[int32](1), nil)
		job.Labels = map[string]string{jobframework.QueueNameLabel: queue}
		if err := w.Default(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		if got := job.Spec.ManagedBy; ptr.Deref(got, "") != ptr.Deref(want, "") {
			t.Errorf("queue %s: managedBy %v, want %v", queue, ptr.Deref(got, "<nil>"), ptr.Deref(want, "<nil>"))
		}
	}
}

// The copy sent to a worker has no selector or labels derived from the
// manager's UID, no managedBy, and is suspended; a hand-written selector
// stays.
func TestRemoteCopy(t *testing.T) {
	job := newJob(ptr.To[int32](2), nil)
	job.Spec.ManagedBy = ptr.To(jobframework.MultiKueueManagedBy)
	job.Spec.Suspend = ptr.To(false)
	job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "uid"}}
	job.Spec.Template.Labels = map[string]string{batchv1.ControllerUidLabel: "uid", batchv1.JobNameLabel: "j", "app": "x"}
	got := New(job).(*Job).RemoteCopy().(*batchv1.Job)
	if got.Spec.Selector != nil || got.Spec.ManagedBy != nil || !ptr.Deref(got.Spec.Suspend, false) ||
		len(got.Spec.Template.Labels) != 1 || got.Spec.Template.Labels["app"] != "x" || got.Name != "j" || got.Namespace != "ns" {
		t.Errorf("remote copy %+v", got.Spec)
	}
	if job.Spec.ManagedBy == nil || len(job.Spec.Template.Labels) != 3 {
		t.Errorf("the manager's job was changed")
	}
	job.Spec.ManualSelector = ptr.To(true)
	if got := New(job).(*Job).RemoteCopy().(*batchv1.Job); got.Spec.Selector == nil {
		t.Errorf("a manual selector was dropped")
	}
}
