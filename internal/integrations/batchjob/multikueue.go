package batchjob

import (
	"maps"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get;update;patch

var _ jobframework.JobWithRemote = (*Job)(nil)

// ManagedBy returns spec.managedBy.
func (j *Job) ManagedBy() *string { return j.job.Spec.ManagedBy }

// SetManagedBy sets spec.managedBy.
func (j *Job) SetManagedBy(v *string) { j.job.Spec.ManagedBy = v }

// uidLabels are the labels the API server puts on a Job's pod template
// from the Job's UID and name when it generates the selector.
var uidLabels = []string{batchv1.ControllerUidLabel, batchv1.JobNameLabel, "controller-uid", "job-name"}

// RemoteCopy returns the Job to create in a worker. The generated selector
// and the template labels it matches name the manager's UID; the worker's
// API server generates its own.
func (j *Job) RemoteCopy() client.Object {
	src := j.job
	out := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: src.Name, Namespace: src.Namespace,
		Labels: maps.Clone(src.Labels), Annotations: maps.Clone(src.Annotations)}, Spec: *src.Spec.DeepCopy()}
	out.Spec.ManagedBy = nil
	out.Spec.Suspend = ptr.To(true)
	if !ptr.Deref(out.Spec.ManualSelector, false) {
		out.Spec.Selector = nil
		for _, l := range uidLabels {
			delete(out.Spec.Template.Labels, l)
		}
	}
	return out
}

// SyncStatus copies the worker Job's status.
func (j *Job) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*batchv1.Job)
	if !ok || equality.Semantic.DeepEqual(j.job.Status, r.Status) {
		return false
	}
	j.job.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus sets the active, ready and terminating counts to zero and
// drops the start time, as the Job controller does for a suspended Job
// (a Job with a start time cannot have its pod template restored).
func (j *Job) ClearStatus() bool {
	st := &j.job.Status
	if st.Active == 0 && ptr.Deref(st.Ready, 0) == 0 && ptr.Deref(st.Terminating, 0) == 0 && st.StartTime == nil {
		return false
	}
	st.Active, st.Ready, st.Terminating, st.StartTime = 0, ptr.To[int32](0), ptr.To[int32](0), nil
	return true
}
