package kubeflow

import (
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=kubeflow.org,resources=pytorchjobs/status;tfjobs/status;xgboostjobs/status;paddlejobs/status;jaxjobs/status;mpijobs/status,verbs=get;update;patch

var _ jobframework.JobWithRemote = (*Job)(nil)

// ManagedBy returns spec.runPolicy.managedBy.
func (j *Job) ManagedBy() *string { return *j.src.managedBy() }

// SetManagedBy sets spec.runPolicy.managedBy.
func (j *Job) SetManagedBy(v *string) { *j.src.managedBy() = v }

// RemoteCopy returns the job to create in a worker: suspended, without
// managedBy or status.
func (j *Job) RemoteCopy() client.Object {
	cp := j.src.wrap(jobframework.WorkerCopy(j.src.object()))
	*cp.managedBy() = nil
	*cp.suspend() = ptr.To(true)
	cp.clearStatus()
	return cp.object()
}

// SyncStatus copies the worker job's status.
func (j *Job) SyncStatus(remote client.Object) bool { return j.src.copyStatus(remote) }

// ClearStatus zeroes the active pods and drops the start time, as the
// operators do for a suspended job.
func (j *Job) ClearStatus() bool { return j.src.clearRun() }
