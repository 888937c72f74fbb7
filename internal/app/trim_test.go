package app

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
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
	out, err := newTrimmer().workload(wl)
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

// A finished Workload is cached without what nothing reads once it is
// over, and marked so that no status is ever written from that copy.
func TestFinishedWorkloadIsTrimmedAndMarked(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns",
		Labels:      map[string]string{jobframework.JobUIDLabel: "job-uid", "team": "a"},
		Annotations: map[string]string{jobframework.JobOwnerNameAnnotation: "job"}},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 4, MinCount: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: cpu}}}}}}}},
		Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue},
				{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedSucceeded}},
			Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](4),
				Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"}, ResourceUsage: cpu}}},
			ResourceRequests: []kueue.PodSetRequest{{Name: "main", Resources: cpu}},
		}}
	running := wl.DeepCopy()
	running.Status.Conditions = running.Status.Conditions[:1]

	out, _ := newTrimmer().workload(wl)
	got := out.(*kueue.Workload)
	if !apply.Trimmed(got) {
		t.Fatal("a finished Workload's trimmed copy is not marked")
	}
	if got.Spec.PodSets != nil || got.Spec.QueueName != "lq" {
		t.Fatalf("finished spec %+v, want the queue without pod sets", got.Spec)
	}
	a := got.Status.Admission
	if a == nil || a.ClusterQueue != "cq" || a.PodSetAssignments != nil || got.Status.ResourceRequests != nil {
		t.Fatalf("finished status %+v, want the admission's ClusterQueue only", got.Status)
	}
	if len(got.Status.Conditions) != 1 || !jobframework.IsFinished(got) || got.Status.Conditions[0].Reason != kueue.WorkloadFinishedSucceeded {
		t.Fatalf("conditions %v, want the Finished condition alone", got.Status.Conditions)
	}
	// An orphan keeps the job-uid label, which the job index reads; its
	// other labels are not read.
	if len(got.Labels) != 1 || got.Labels[jobframework.JobUIDLabel] != "job-uid" || got.Annotations[jobframework.JobOwnerNameAnnotation] != "job" {
		t.Fatalf("orphan's labels %v annotations %v, want the job-uid label and the owner annotations", got.Labels, got.Annotations)
	}
	owned := wl.DeepCopy()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: "job-uid", Controller: ptr.To(true)}}
	owned.Labels = map[string]string{jobframework.JobUIDLabel: "job-uid", "team": "a"}
	out, _ = newTrimmer().workload(owned)
	if got := out.(*kueue.Workload); got.Labels != nil || len(jobframework.IndexWorkloadByJob(got)) != 1 {
		t.Fatalf("owned finished Workload: labels %v, job index %v; want no labels, indexed by its owner", got.Labels, jobframework.IndexWorkloadByJob(got))
	}

	out, _ = newTrimmer().workload(running)
	kept := out.(*kueue.Workload)
	if apply.Trimmed(kept) || kept.Status.ResourceRequests == nil || kept.Status.Admission.PodSetAssignments[0].ResourceUsage == nil ||
		len(kept.Spec.PodSets[0].Template.Spec.Containers) != 1 {
		t.Fatalf("a running Workload lost what the manager reads: %+v", kept)
	}

	w := &apply.Writer{} // no client: a refused write never reaches one
	err := w.WorkloadStatus(context.Background(), got, apply.AdmissionStatus(got), apply.AdmissionManager)
	if !errors.Is(err, apply.ErrTrimmed) {
		t.Fatalf("status write from the trimmed copy: %v, want ErrTrimmed", err)
	}
}
