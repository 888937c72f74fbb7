package jobframework

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestLiveFallbackReadsThroughOnNotFound(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"x": "y"}}}
	cached := fake.NewClientBuilder().Build()
	live := fake.NewClientBuilder().WithObjects(ns).Build()
	r := LiveFallback{Cached: cached, Live: live}

	var got corev1.Namespace
	if err := r.Get(context.Background(), client.ObjectKey{Name: "team-a"}, &got); err != nil {
		t.Fatalf("namespace only the API server has: %v", err)
	}
	if got.Labels["x"] != "y" {
		t.Fatalf("read %+v, want the live object", got)
	}
	err := r.Get(context.Background(), client.ObjectKey{Name: "absent"}, &got)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("absent everywhere: err = %v, want NotFound", err)
	}
}

// A job may be unsuspended once its Workload is admitted, even when this
// replica's cache still shows the Workload pending: the webhook asks the
// API server before refusing.
func TestAdmittedCheckReadsTheLiveWorkload(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	job := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "j", UID: "u",
		Labels: map[string]string{PrebuiltWorkloadLabel: "wl"}}}
	pending := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}}
	admitted := pending.DeepCopy()
	admitted.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"}}
	stale := fake.NewClientBuilder().WithScheme(scheme).WithObjects(pending).Build()
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(admitted).Build()

	w := &Webhook{Client: LiveFallback{Cached: stale, Live: live}}
	if errs := w.checkAdmitted(context.Background(), job, field.NewPath("spec", "suspend")); len(errs) != 0 {
		t.Fatalf("refused although the API server shows the Workload admitted: %v", errs)
	}
	w = &Webhook{Client: LiveFallback{Cached: stale, Live: stale}}
	if errs := w.checkAdmitted(context.Background(), job, field.NewPath("spec", "suspend")); len(errs) == 0 {
		t.Fatal("a pending Workload must keep the job suspended")
	}
}
