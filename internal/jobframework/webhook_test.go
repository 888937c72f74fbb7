package jobframework

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// admittedWorkload is an admitted Workload controlled by the Job with
// that name and UID.
func admittedWorkload(name, owner, uid string) *kueue.Workload {
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "batch/v1", Kind: "Job", Name: owner, UID: types.UID(uid), Controller: ptr.To(true)}}},
		Status: kueue.WorkloadStatus{Conditions: []metav1.Condition{
			{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"}}},
	}
}

// A job naming another job's admitted Workload with the
// prebuilt-workload-name label cannot be started on it; the Workload's
// own job can.
func TestStartingOnAnotherJobsWorkloadIsRefused(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(admittedWorkload("wl", "a", "uid-a")).Build()
	w := &Webhook{Client: c}
	job := func(name, uid string) client.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(uid),
			Labels: map[string]string{PrebuiltWorkloadLabel: "wl"}}}
	}
	path := field.NewPath("spec", "suspend")
	errs := w.checkAdmitted(context.Background(), job("b", "uid-b"), path)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden || !strings.Contains(errs[0].Detail, "controlled by Job a") {
		t.Fatalf("errors %v, want Forbidden naming Job a", errs)
	}
	if errs := w.checkAdmitted(context.Background(), job("a", "uid-a"), path); len(errs) != 0 {
		t.Fatalf("the Workload's own job refused: %v", errs)
	}
}

// A managed job created running on another job's Workload is refused too
// (the defaulting suspends managed jobs, so only one that bypassed it gets
// here).
func TestCreatingRunningOnAnotherJobsWorkloadIsRefused(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(admittedWorkload("wl", "a", "uid-a")).Build()
	w := &Webhook{Client: c, Integration: Integration{GVK: jobGVK, NewJob: func(obj client.Object) Job { return &tasJob{job: obj.(*batchv1.Job)} }}}
	b := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "uid-b",
		Labels: map[string]string{QueueNameLabel: "lq", PrebuiltWorkloadLabel: "wl"}}, Spec: batchv1.JobSpec{Suspend: ptr.To(false)}}
	if err := w.ValidateCreate(context.Background(), b); err == nil || !strings.Contains(err.Error(), "controlled by Job a") {
		t.Fatalf("error %v, want one naming Job a", err)
	}
	b.Spec.Suspend = ptr.To(true)
	if err := w.ValidateCreate(context.Background(), b); err != nil {
		t.Fatalf("a suspended job refused: %v", err)
	}
}
