package app

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/workload"
)

// A trimmed Workload keeps everything quota, flavor assignment and the
// jobframework's comparison read: same shape, equivalent pod sets.
func TestTrimmedWorkloadKeepsWhatIsRead(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	spec := corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "sidecar", Image: "proxy", RestartPolicy: &always,
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
		Containers: []corev1.Container{{Name: "main", Image: "trainer:1", Command: []string{"python", "train.py"},
			Env:       []corev1.EnvVar{{Name: "EPOCHS", Value: "10"}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), "nvidia.com/gpu": resource.MustParse("1")}}}},
		NodeSelector: map[string]string{"pool": "a100"},
		Tolerations:  []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
		Overhead:     corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		Volumes:      []corev1.Volume{{Name: "data"}},
	}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", Annotations: map[string]string{lastApplied: "{}", "keep": "me"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}},
		Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: 4, MinCount: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: spec}}}}}
	orig := wl.DeepCopy()
	out, err := trimWorkload(wl)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := out.(*kueue.Workload)
	if trimmed.ManagedFields != nil || trimmed.Annotations[lastApplied] != "" || trimmed.Annotations["keep"] != "me" {
		t.Fatalf("metadata %+v", trimmed.ObjectMeta)
	}
	if c := trimmed.Spec.PodSets[0].Template.Spec.Containers[0]; c.Image != "" || c.Env != nil || c.Command != nil {
		t.Fatalf("container kept what is never read: %+v", c)
	}
	opts := workload.ShapeOptions{}
	if a, b := workload.ShapeFromPodSets(orig.Spec.PodSets, opts).Key, workload.ShapeFromPodSets(trimmed.Spec.PodSets, opts).Key; a != b {
		t.Fatalf("shape changed by trimming:\n%s\n%s", a, b)
	}
	if !jobframework.EquivalentPodSets(orig.Spec.PodSets, trimmed.Spec.PodSets) {
		t.Fatal("trimmed pod sets are not equivalent to the original: the jobframework would replace the Workload")
	}
}
