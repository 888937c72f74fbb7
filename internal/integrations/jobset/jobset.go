// Package jobset queues JobSets (jobset.x-k8s.io/v1alpha2): a JobSet is
// one PodSet per replicated job, named after it, of replicas ×
// min(parallelism, completions) pods. The webhook creates managed JobSets
// suspended; an admission injects each PodSet's flavor node selector and
// tolerations into its replicated job's pod template and resumes the
// JobSet (whose own controller then creates the child Jobs); an eviction
// suspends it and puts the templates back. A JobSet is finished when its
// Completed or Failed condition is true. JobSets have no partial
// admission, as in Kueue.
package jobset

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FrameworkName is the name in integrations.frameworks.
const FrameworkName = "jobset.x-k8s.io/jobset"

// GVK is the kind this package handles.
var GVK = jobsetapi.GroupVersion.WithKind("JobSet")

// JobSet wraps a JobSet.
type JobSet struct{ js *jobsetapi.JobSet }

var (
	_ jobframework.Job                    = (*JobSet)(nil)
	_ jobframework.JobWithReclaimablePods = (*JobSet)(nil)
	_ jobframework.JobWithPodSelector     = (*JobSet)(nil)
	_ jobframework.JobWithPodIndex        = (*JobSet)(nil)
	_ jobframework.JobWithTemplatePaths   = (*JobSet)(nil)
)

// PodIndex: a replicated job's pods carry their completion index within
// their Job, and the index of their Job among the replicas.
func (j *JobSet) PodIndex(ps *kueue.PodSet) jobframework.PodIndex {
	ix := jobframework.PodIndex{Label: batchv1.JobCompletionIndexAnnotation, SubGroupLabel: jobsetapi.JobIndexKey}
	if rj := j.replicatedJob(ps.Name); rj != nil {
		ix.SubGroupCount = ptr.To(rj.Replicas)
	}
	return ix
}

// TemplatePath is the replicated job's pod template.
func (j *JobSet) TemplatePath(name kueue.PodSetReference) *field.Path {
	for i := range j.js.Spec.ReplicatedJobs {
		if j.js.Spec.ReplicatedJobs[i].Name == string(name) {
			return field.NewPath("spec", "replicatedJobs").Index(i).Child("template", "spec", "template")
		}
	}
	return nil
}

// New wraps obj, which must be a *jobsetapi.JobSet (a new one when nil).
func New(obj client.Object) jobframework.Job {
	if obj == nil {
		return &JobSet{js: &jobsetapi.JobSet{}}
	}
	return &JobSet{js: obj.(*jobsetapi.JobSet)}
}

// Object returns the JobSet.
func (j *JobSet) Object() client.Object { return j.js }

// IsSuspended reports spec.suspend.
func (j *JobSet) IsSuspended() bool { return ptr.Deref(j.js.Spec.Suspend, false) }

// Suspend sets spec.suspend; the JobSet controller suspends the child
// Jobs, which delete their pods.
func (j *JobSet) Suspend() { j.js.Spec.Suspend = ptr.To(true) }

// PodsPerReplica is how many pods one Job of a replicated job runs at
// once: its parallelism (default 1), capped by its completions.
func PodsPerReplica(rj *jobsetapi.ReplicatedJob) int32 {
	spec := &rj.Template.Spec
	n := ptr.Deref(spec.Parallelism, 1)
	if c := spec.Completions; c != nil && *c < n {
		n = *c
	}
	return n
}

// PodsCount is the pods of a whole replicated job: replicas × pods per
// replica.
func PodsCount(rj *jobsetapi.ReplicatedJob) int32 {
	return rj.Replicas * PodsPerReplica(rj)
}

// PodSets returns one PodSet per replicated job, in the JobSet's order.
func (j *JobSet) PodSets() ([]kueue.PodSet, error) {
	rjs := j.js.Spec.ReplicatedJobs
	if len(rjs) == 0 {
		return nil, fmt.Errorf("spec.replicatedJobs: a JobSet needs at least one replicated job")
	}
	out := make([]kueue.PodSet, 0, len(rjs))
	for i := range rjs {
		rj := &rjs[i]
		out = append(out, kueue.PodSet{
			Name:     kueue.PodSetReference(rj.Name),
			Count:    PodsCount(rj),
			Template: *rj.Template.Spec.Template.DeepCopy(),
		})
	}
	return out, nil
}

// replicatedJob returns the replicated job of that name, or nil.
func (j *JobSet) replicatedJob(name kueue.PodSetReference) *jobsetapi.ReplicatedJob {
	for i := range j.js.Spec.ReplicatedJobs {
		if j.js.Spec.ReplicatedJobs[i].Name == string(name) {
			return &j.js.Spec.ReplicatedJobs[i]
		}
	}
	return nil
}

// RunWithPodSetsInfo injects the admission into each replicated job's pod
// template and resumes the JobSet. Every replicated job must have its
// PodSet in the admission.
func (j *JobSet) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if len(infos) != len(j.js.Spec.ReplicatedJobs) {
		return fmt.Errorf("the JobSet has %d replicated jobs, the admission has %d PodSets", len(j.js.Spec.ReplicatedJobs), len(infos))
	}
	for _, info := range infos {
		rj := j.replicatedJob(info.Name)
		if rj == nil {
			return fmt.Errorf("the admission has PodSet %q, which is no replicated job of the JobSet", info.Name)
		}
		if err := jobframework.ApplyToTemplate(&rj.Template.Spec.Template, info); err != nil {
			return fmt.Errorf("replicated job %s: %w", rj.Name, err)
		}
	}
	j.js.Spec.Suspend = ptr.To(false)
	return nil
}

// RestorePodSetsInfo puts back each replicated job's original pod
// template metadata, node selector and tolerations.
func (j *JobSet) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	changed := false
	for _, info := range infos {
		if rj := j.replicatedJob(info.Name); rj != nil {
			changed = jobframework.RestoreTemplate(&rj.Template.Spec.Template, info) || changed
		}
	}
	return changed
}

// Finished reads the Completed and Failed conditions.
func (j *JobSet) Finished() (string, bool, bool) {
	if c := meta.FindStatusCondition(j.js.Status.Conditions, string(jobsetapi.JobSetCompleted)); c != nil && c.Status == metav1.ConditionTrue {
		return messageOr(c.Message, "JobSet completed successfully"), true, true
	}
	if c := meta.FindStatusCondition(j.js.Status.Conditions, string(jobsetapi.JobSetFailed)); c != nil && c.Status == metav1.ConditionTrue {
		return messageOr(c.Message, "JobSet failed"), false, true
	}
	return "", false, false
}

func messageOr(msg, fallback string) string {
	if msg == "" {
		return fallback
	}
	return msg
}

// IsActive reports whether any child Job still has pods pending or
// running.
func (j *JobSet) IsActive() bool {
	for _, st := range j.js.Status.ReplicatedJobsStatus {
		if st.Active > 0 {
			return true
		}
	}
	return false
}

// PodsReady reports whether every replicated job has all its Jobs ready
// or succeeded.
func (j *JobSet) PodsReady() bool {
	for i := range j.js.Spec.ReplicatedJobs {
		rj := &j.js.Spec.ReplicatedJobs[i]
		st := j.status(rj.Name)
		if st == nil || st.Ready+st.Succeeded < rj.Replicas {
			return false
		}
	}
	return true
}

func (j *JobSet) status(name string) *jobsetapi.ReplicatedJobStatus {
	for i := range j.js.Status.ReplicatedJobsStatus {
		if j.js.Status.ReplicatedJobsStatus[i].Name == name {
			return &j.js.Status.ReplicatedJobsStatus[i]
		}
	}
	return nil
}

// ReclaimablePods gives back the quota of the Jobs that succeeded: their
// pods will not run again.
func (j *JobSet) ReclaimablePods() []kueue.ReclaimablePod {
	var out []kueue.ReclaimablePod
	for i := range j.js.Spec.ReplicatedJobs {
		rj := &j.js.Spec.ReplicatedJobs[i]
		st := j.status(rj.Name)
		if st == nil || st.Succeeded <= 0 {
			continue
		}
		out = append(out, kueue.ReclaimablePod{Name: kueue.PodSetReference(rj.Name), Count: min(st.Succeeded, rj.Replicas) * PodsPerReplica(rj)})
	}
	return out
}

// PodSelector selects the pods of the JobSet with that UID: the JobSet
// controller labels its Jobs' pods with jobset.sigs.k8s.io/jobset-uid.
// (The pods' controller owner is a child Job, not the JobSet.)
func (j *JobSet) PodSelector(uid types.UID) labels.Selector {
	return labels.SelectorFromSet(labels.Set{jobsetapi.JobSetUIDKey: string(uid)})
}
