package jobframework

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func limitRange(items ...corev1.LimitRangeItem) corev1.LimitRange {
	return corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: items}}
}

func TestWithPodDefaults(t *testing.T) {
	cpu := func(s string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(s)}
	}
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers: []corev1.Container{
			{Name: "bare"},
			{Name: "set", Resources: corev1.ResourceRequirements{Requests: cpu("3"), Limits: cpu("4")}},
		},
	}
	limits := []corev1.LimitRange{
		limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: cpu("100")},
			corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Default: cpu("2"), DefaultRequest: cpu("1")}),
		limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, DefaultRequest: cpu("5"),
			Default: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}),
	}
	out, changed := WithPodDefaults(spec, limits, cpu("250m"))
	if !changed {
		t.Fatal("defaults apply, yet nothing changed")
	}
	if spec.Containers[0].Resources.Requests != nil || spec.Overhead != nil {
		t.Fatal("the input spec was changed")
	}
	bare := out.Containers[0].Resources
	if !bare.Requests.Cpu().Equal(resource.MustParse("1")) || !bare.Limits.Cpu().Equal(resource.MustParse("2")) ||
		!bare.Limits.Memory().Equal(resource.MustParse("1Gi")) {
		t.Errorf("the first LimitRange to set a default wins, the second fills the rest: %+v", bare)
	}
	if set := out.Containers[1].Resources; !set.Requests.Cpu().Equal(resource.MustParse("3")) || !set.Limits.Cpu().Equal(resource.MustParse("4")) {
		t.Errorf("set values must stay: %+v", set)
	}
	if !out.InitContainers[0].Resources.Requests.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("init containers get defaults too: %+v", out.InitContainers[0].Resources)
	}
	if !out.Overhead.Cpu().Equal(resource.MustParse("250m")) {
		t.Errorf("overhead %v", out.Overhead)
	}
	again, changed := WithPodDefaults(out, limits, cpu("250m"))
	if changed || again != out {
		t.Error("a spec that has its defaults must be left as it is")
	}
}
