package plugin

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func managerDeployment(ns, image string) *appsv1.Deployment {
	labels := map[string]string{"app": "kuota"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kueue-controller-manager"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "sidecar", Image: "example.com/proxy:v1"}, {Name: "manager", Image: image},
			}}},
		},
	}
}

func TestVersion(t *testing.T) {
	tr := newTranscript(t)
	tr.ok("version") // no manager installed: the client version only
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kueue-system"}},
		managerDeployment("kueue-system", "registry.example.com/kuota-manager:v0.3.0"))
	tr.ok("version")
	namespace(t, "custom-install")
	create(t, managerDeployment("custom-install", "registry.example.com/kuota-manager:v0.4.0-rc.1"))
	tr.ok("version", "-n", "custom-install")
	tr.check()
}
