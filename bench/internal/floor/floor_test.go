package floor

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
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
