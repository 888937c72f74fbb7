package appwrapper

import (
	"encoding/json"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func podTemplate(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		NodeSelector:  map[string]string{"team": "ml"},
		Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
	}}
}

// raw encodes a typed object as a component template.
func raw(t testing.TB, obj runtime.Object) runtime.RawExtension {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.RawExtension{Raw: data}
}

// jobComponent wraps a batch/v1 Job of parallelism pods (pod sets
// inferred).
func jobComponent(t testing.TB, parallelism int32) awv1beta2.AppWrapperComponent {
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: metav1.ObjectMeta{Name: "j"},
		Spec: batchv1.JobSpec{Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism), Template: podTemplate("1")}}
	return awv1beta2.AppWrapperComponent{Template: raw(t, job)}
}

// deploymentComponent wraps a Deployment of replicas pods, its pod set
// declared.
func deploymentComponent(t testing.TB, replicas int32) awv1beta2.AppWrapperComponent {
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: podTemplate("500m")}}
	d.Spec.Template.Labels = map[string]string{"app": "d"}
	return awv1beta2.AppWrapperComponent{Template: raw(t, d),
		DeclaredPodSets: []awv1beta2.AppWrapperPodSet{{Path: "template.spec.template", Replicas: ptr.To(replicas)}}}
}

// newAppWrapper is a queued AppWrapper "aw" in namespace "ns" wrapping a
// Job of 2 pods and a Deployment of 3.
func newAppWrapper(t testing.TB) *awv1beta2.AppWrapper {
	return &awv1beta2.AppWrapper{
		TypeMeta:   metav1.TypeMeta{APIVersion: awv1beta2.GroupVersion.String(), Kind: "AppWrapper"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "aw", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec:       awv1beta2.AppWrapperSpec{Components: []awv1beta2.AppWrapperComponent{jobComponent(t, 2), deploymentComponent(t, 3)}},
	}
}
