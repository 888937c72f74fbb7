package floor

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
)

func TestAdmissionAssignsEveryRequestToTheFlavor(t *testing.T) {
	wl := &kueue.Workload{Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{
		Name: "main", Count: 3,
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "a", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
			{Name: "b", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1")}}},
		}}},
	}}}}
	adm := Admission(wl, "cq", "f")
	if adm.ClusterQueue != "cq" || len(adm.PodSetAssignments) != 1 {
		t.Fatalf("admission = %+v, want one podset in cq", adm)
	}
	psa := adm.PodSetAssignments[0]
	if psa.Name != "main" || psa.Count == nil || *psa.Count != 3 {
		t.Fatalf("podset assignment = %+v, want main with count 3", psa)
	}
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: "4500m", corev1.ResourceMemory: "3Gi"} {
		if psa.Flavors[name] != "f" {
			t.Errorf("flavor of %s = %q, want f", name, psa.Flavors[name])
		}
		got := psa.ResourceUsage[name]
		if got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("usage of %s = %s, want %s", name, got.String(), want)
		}
	}
}

func TestReconcilersAdmitAndActivate(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	rf := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "f"}}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"}, Spec: kueue.WorkloadSpec{QueueName: "lq",
		PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}}}}}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cq, lq, rf, wl).WithStatusSubresource(cq, wl).Build()
	ctx := context.Background()
	if _, err := (&Activator{Client: c}).Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cq)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cq), cq); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ClusterQueueActive) {
		t.Errorf("ClusterQueue not Active: %+v", cq.Status.Conditions)
	}
	a := &Admitter{Client: c, Writer: &apply.Writer{Client: c}}
	if _, err := a.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(wl)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) || wl.Status.Admission == nil ||
		wl.Status.Admission.ClusterQueue != "cq" {
		t.Fatalf("workload not admitted to cq: %+v", wl.Status)
	}
}
