// Package batchjob queues batch/v1 Jobs: a Job is one PodSet "main" of
// min(parallelism, completions) pods, held by spec.suspend until admitted,
// optionally admitted smaller (partial admission, down to the
// kueue.x-k8s.io/job-min-parallelism annotation), and giving back the quota
// of pods it no longer needs as it completes.
package batchjob

import (
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Annotations of batch/v1 Jobs.
const (
	// MinParallelismAnnotation allows partial admission down to that
	// parallelism.
	MinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism"
	// CompletionsEqualParallelismAnnotation keeps completions equal to the
	// parallelism a partial admission sets.
	CompletionsEqualParallelismAnnotation = "kueue.x-k8s.io/job-completions-equal-parallelism"
)

// GVK is the kind this package handles.
var GVK = batchv1.SchemeGroupVersion.WithKind("Job")

// Job wraps a batch/v1 Job.
type Job struct{ job *batchv1.Job }

var (
	_ jobframework.Job                    = (*Job)(nil)
	_ jobframework.JobWithReclaimablePods = (*Job)(nil)
	_ jobframework.JobWithPodSelector     = (*Job)(nil)
	_ jobframework.JobWithPodIndex        = (*Job)(nil)
	_ jobframework.JobWithTemplatePaths   = (*Job)(nil)
)

// PodIndex: an Indexed Job's pods carry their completion index.
func (j *Job) PodIndex(*kueue.PodSet) jobframework.PodIndex {
	return jobframework.PodIndex{Label: batchv1.JobCompletionIndexAnnotation}
}

// TemplatePath is spec.template.
func (j *Job) TemplatePath(kueue.PodSetReference) *field.Path {
	return field.NewPath("spec", "template")
}

// New wraps obj, which must be a *batchv1.Job (a new one when nil).
func New(obj client.Object) jobframework.Job {
	if obj == nil {
		return &Job{job: &batchv1.Job{}}
	}
	return &Job{job: obj.(*batchv1.Job)}
}

// Object returns the Job.
func (j *Job) Object() client.Object { return j.job }

// IsSuspended reports spec.suspend.
func (j *Job) IsSuspended() bool { return ptr.Deref(j.job.Spec.Suspend, false) }

// Suspend sets spec.suspend.
func (j *Job) Suspend() { j.job.Spec.Suspend = ptr.To(true) }

// podsCount is how many pods run at once: parallelism (default 1), capped
// by completions.
func (j *Job) podsCount() int32 {
	n := ptr.Deref(j.job.Spec.Parallelism, 1)
	if c := j.job.Spec.Completions; c != nil && *c < n {
		n = *c
	}
	return n
}

// minCount reads the partial admission annotation (0 when absent).
func (j *Job) minCount() (int32, error) {
	v, ok := j.job.Annotations[MinParallelismAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("annotation %s: %q is not a positive integer", MinParallelismAnnotation, v)
	}
	return int32(n), nil
}

// PodSets returns the single PodSet "main".
func (j *Job) PodSets() ([]kueue.PodSet, error) {
	ps := kueue.PodSet{
		Name:     kueue.DefaultPodSetName,
		Count:    j.podsCount(),
		Template: *j.job.Spec.Template.DeepCopy(),
	}
	minCount, err := j.minCount()
	if err != nil {
		return nil, err
	}
	if minCount > 0 && minCount < ps.Count {
		ps.MinCount = ptr.To(minCount)
	}
	return []kueue.PodSet{ps}, nil
}

// RunWithPodSetsInfo injects the admission into the pod template, sets the
// admitted parallelism after a partial admission, and unsuspends.
func (j *Job) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if len(infos) != 1 {
		return fmt.Errorf("a Job has one PodSet, the admission has %d", len(infos))
	}
	info := infos[0]
	if err := jobframework.ApplyToTemplate(&j.job.Spec.Template, info); err != nil {
		return err
	}
	if info.Count > 0 && info.Count != j.podsCount() {
		j.job.Spec.Parallelism = ptr.To(info.Count)
		if j.job.Annotations[CompletionsEqualParallelismAnnotation] == "true" {
			j.job.Spec.Completions = ptr.To(info.Count)
		}
	}
	j.job.Spec.Suspend = ptr.To(false)
	return nil
}

// RestorePodSetsInfo puts the original pod template back, and the original
// parallelism after a partial admission.
func (j *Job) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	if len(infos) != 1 {
		return false
	}
	info := infos[0]
	changed := jobframework.RestoreTemplate(&j.job.Spec.Template, info)
	if _, partial := j.job.Annotations[MinParallelismAnnotation]; partial && info.Count > 0 && j.podsCount() != info.Count {
		j.job.Spec.Parallelism = ptr.To(info.Count)
		if j.job.Annotations[CompletionsEqualParallelismAnnotation] == "true" {
			j.job.Spec.Completions = ptr.To(info.Count)
		}
		changed = true
	}
	return changed
}

// Finished reads the Complete and Failed conditions.
func (j *Job) Finished() (string, bool, bool) {
	for _, c := range j.job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return "Job finished successfully", true, true
		case batchv1.JobFailed:
			return c.Message, false, true
		}
	}
	return "", false, false
}

// IsActive reports running or terminating pods.
func (j *Job) IsActive() bool {
	return j.job.Status.Active > 0 || ptr.Deref(j.job.Status.Terminating, 0) > 0
}

// PodsReady reports whether ready and succeeded pods reach the count.
func (j *Job) PodsReady() bool {
	return ptr.Deref(j.job.Status.Ready, 0)+j.job.Status.Succeeded >= j.podsCount()
}

// ReclaimablePods counts the pods no longer needed: once fewer completions
// remain than pods run at once, the difference can go.
func (j *Job) ReclaimablePods() []kueue.ReclaimablePod {
	completions := j.job.Spec.Completions
	if completions == nil {
		return nil
	}
	running := j.podsCount()
	remaining := max(*completions-j.job.Status.Succeeded, 0)
	if remaining >= running {
		return nil
	}
	return []kueue.ReclaimablePod{{Name: kueue.DefaultPodSetName, Count: running - remaining}}
}

// PodSelector selects the pods the Job controller created for the Job with
// that UID: they carry its UID in batch.kubernetes.io/controller-uid.
func (j *Job) PodSelector(uid types.UID) labels.Selector {
	return labels.SelectorFromSet(labels.Set{batchv1.ControllerUidLabel: string(uid)})
}
