package appwrapper

import (
	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers/status,verbs=get;update;patch

var _ jobframework.JobWithRemote = (*AppWrapper)(nil)

// ManagedBy returns spec.managedBy.
func (j *AppWrapper) ManagedBy() *string { return j.aw.Spec.ManagedBy }

// SetManagedBy sets spec.managedBy.
func (j *AppWrapper) SetManagedBy(v *string) { j.aw.Spec.ManagedBy = v }

// RemoteCopy returns the AppWrapper to create in a worker: suspended,
// without managedBy or status.
func (j *AppWrapper) RemoteCopy() client.Object {
	cp := jobframework.WorkerCopy(j.aw).(*awv1beta2.AppWrapper)
	cp.Spec.ManagedBy, cp.Spec.Suspend, cp.Status = nil, true, awv1beta2.AppWrapperStatus{}
	return cp
}

// SyncStatus copies the worker AppWrapper's status.
func (j *AppWrapper) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*awv1beta2.AppWrapper)
	if !ok || equality.Semantic.DeepEqual(j.aw.Status, r.Status) {
		return false
	}
	j.aw.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus drops the QuotaReserved condition the worker's controller
// held: the worker's AppWrapper is gone.
func (j *AppWrapper) ClearStatus() bool {
	return meta.RemoveStatusCondition(&j.aw.Status.Conditions, string(awv1beta2.QuotaReserved))
}
