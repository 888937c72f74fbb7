package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func podTemplateWith(cpu string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "ray"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ray", Image: "rayproject/ray:2.41.0",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

func clusterSpec() rayv1.RayClusterSpec {
	return rayv1.RayClusterSpec{
		HeadGroupSpec: rayv1.HeadGroupSpec{Template: podTemplateWith("1")},
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
			{GroupName: "small", Replicas: ptr.To[int32](3), Template: podTemplateWith("500m")},
			{GroupName: "TPU", Replicas: ptr.To[int32](2), NumOfHosts: 4, Template: podTemplateWith("2")},
		},
	}
}

func newRayJob() *rayv1.RayJob {
	spec := clusterSpec()
	return &rayv1.RayJob{
		ObjectMeta: metav1.ObjectMeta{Name: "rj", Namespace: "ns", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: rayv1.RayJobSpec{
			RayClusterSpec: &spec, Entrypoint: "python job.py", ShutdownAfterJobFinishes: true,
			SubmissionMode: rayv1.K8sJobMode, Suspend: true,
		},
	}
}

func newRayCluster() *rayv1.RayCluster {
	return &rayv1.RayCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec:       clusterSpec(),
	}
}

func newRayService() *rayv1.RayService {
	return &rayv1.RayService{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec:       rayv1.RayServiceSpec{RayClusterSpec: clusterSpec()},
	}
}

// admitted is an admission of every PodSet onto a flavor with node label
// pool=<podset>.
func admitted(names ...string) []jobframework.PodSetInfo {
	out := make([]jobframework.PodSetInfo, 0, len(names))
	for _, n := range names {
		out = append(out, jobframework.PodSetInfo{
			Name:         kueue.PodSetReference(n),
			NodeSelector: map[string]string{"pool": n},
			Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: n, Effect: corev1.TaintEffectNoSchedule}},
			Labels:       map[string]string{jobframework.PodSetLabel: n},
			Annotations:  map[string]string{jobframework.WorkloadAnnotation: "wl"},
		})
	}
	return out
}
