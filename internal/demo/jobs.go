package demo

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/devcluster"
)

// Labels the demo's Jobs carry. The first two are Kueue's, read by Kuota;
// DemoLabel marks the Jobs the demo made, so that it deletes only those.
const (
	QueueNameLabel     = "kueue.x-k8s.io/queue-name"
	PriorityClassLabel = "kueue.x-k8s.io/priority-class"
	DemoLabel          = "kuota.dev/demo"
	// GPUResource is the extended resource the fake nodes offer.
	GPUResource = corev1.ResourceName("nvidia.com/gpu")
)

// Per GPU, a pod of the demo also asks for this much cpu and memory: the
// quotas cover them too, but GPUs are what runs out.
var (
	cpuPerGPU    = resource.MustParse("2")
	memoryPerGPU = resource.MustParse("8Gi")
)

// Job is the batch/v1 Job a user of the team would write for j: not
// suspended (Kuota's webhook suspends it), with the team's LocalQueue and
// the priority class as labels.
func (j JobSpec) Job() *batchv1.Job {
	gpus := *resource.NewQuantity(j.GPUsPerPod, resource.DecimalSI)
	cpu := cpuPerGPU.DeepCopy()
	cpu.Mul(j.GPUsPerPod)
	memory := memoryPerGPU.DeepCopy()
	memory.Mul(j.GPUsPerPod)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: j.Team.Namespace,
			Name:      j.Name,
			Labels: map[string]string{
				QueueNameLabel:     j.Team.LocalQueue,
				PriorityClassLabel: j.Priority,
				DemoLabel:          "true",
			},
		},
		Spec: batchv1.JobSpec{
			Parallelism:  ptr.To(j.Parallelism),
			Completions:  ptr.To(j.Completions),
			BackoffLimit: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{
				// The pods finish as soon as they run, on any cluster of
				// `kuota dev up` (whose pods otherwise run until deleted):
				// a Job's pace is its waves of pods.
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{DemoLabel: "true"},
					Annotations: map[string]string{devcluster.RunForAnnotation: "0s"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:  "train",
						Image: "busybox",
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory, GPUResource: gpus,
							},
							Limits: corev1.ResourceList{GPUResource: gpus},
						},
					}},
				},
			},
		},
	}
}
