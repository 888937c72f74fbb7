package jobset

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets/status,verbs=get;update;patch

var _ jobframework.JobWithRemote = (*JobSet)(nil)

// ManagedBy returns spec.managedBy.
func (j *JobSet) ManagedBy() *string { return j.js.Spec.ManagedBy }

// SetManagedBy sets spec.managedBy.
func (j *JobSet) SetManagedBy(v *string) { j.js.Spec.ManagedBy = v }

// RemoteCopy returns the JobSet to create in a worker: suspended, without
// managedBy.
func (j *JobSet) RemoteCopy() client.Object {
	src := j.js
	out := &jobsetapi.JobSet{ObjectMeta: metav1.ObjectMeta{Name: src.Name, Namespace: src.Namespace,
		Labels: maps.Clone(src.Labels), Annotations: maps.Clone(src.Annotations)}, Spec: *src.Spec.DeepCopy()}
	out.Spec.ManagedBy = nil
	out.Spec.Suspend = ptr.To(true)
	return out
}

// SyncStatus copies the worker JobSet's status.
func (j *JobSet) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*jobsetapi.JobSet)
	if !ok || equality.Semantic.DeepEqual(j.js.Status, r.Status) {
		return false
	}
	j.js.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus sets the replicated jobs' active and ready counts to zero.
func (j *JobSet) ClearStatus() bool {
	changed := false
	for i := range j.js.Status.ReplicatedJobsStatus {
		st := &j.js.Status.ReplicatedJobsStatus[i]
		if st.Active != 0 || st.Ready != 0 {
			st.Active, st.Ready, changed = 0, 0, true
		}
	}
	return changed
}
