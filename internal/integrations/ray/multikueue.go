package ray

import (
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups=ray.io,resources=rayjobs/status;rayclusters/status;rayservices/status,verbs=get;update;patch

var (
	_ jobframework.JobWithRemote     = (*RayJob)(nil)
	_ jobframework.JobWithRemote     = (*RayCluster)(nil)
	_ jobframework.JobWithRemote     = (*RayService)(nil)
	_ jobframework.JobWithRemoteSpec = (*RayService)(nil)
)

// ManagedBy returns spec.managedBy.
func (j *RayJob) ManagedBy() *string { return j.job.Spec.ManagedBy }

// SetManagedBy sets spec.managedBy.
func (j *RayJob) SetManagedBy(v *string) { j.job.Spec.ManagedBy = v }

// RemoteCopy returns the RayJob to create in a worker: suspended, without
// managedBy or status.
func (j *RayJob) RemoteCopy() client.Object {
	cp := jobframework.WorkerCopy(j.job).(*rayv1.RayJob)
	cp.Spec.ManagedBy, cp.Spec.Suspend, cp.Status = nil, true, rayv1.RayJobStatus{}
	return cp
}

// SyncStatus copies the worker RayJob's status.
func (j *RayJob) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*rayv1.RayJob)
	if !ok || equality.Semantic.DeepEqual(j.job.Status, r.Status) {
		return false
	}
	j.job.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus marks a deployment the worker no longer runs as suspended,
// as the operator does for a suspended RayJob.
func (j *RayJob) ClearStatus() bool {
	if !j.IsActive() {
		return false
	}
	j.job.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusSuspended
	return true
}

// ManagedBy returns spec.managedBy.
func (c *RayCluster) ManagedBy() *string { return c.cluster.Spec.ManagedBy }

// SetManagedBy sets spec.managedBy.
func (c *RayCluster) SetManagedBy(v *string) { c.cluster.Spec.ManagedBy = v }

// RemoteCopy returns the RayCluster to create in a worker: suspended,
// without managedBy or status.
func (c *RayCluster) RemoteCopy() client.Object {
	cp := jobframework.WorkerCopy(c.cluster).(*rayv1.RayCluster)
	cp.Spec.ManagedBy, cp.Spec.Suspend, cp.Status = nil, ptr.To(true), rayv1.RayClusterStatus{}
	return cp
}

// SyncStatus copies the worker RayCluster's status.
func (c *RayCluster) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*rayv1.RayCluster)
	if !ok || equality.Semantic.DeepEqual(c.cluster.Status, r.Status) {
		return false
	}
	c.cluster.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus empties the status of a cluster the worker no longer runs.
func (c *RayCluster) ClearStatus() bool {
	if !c.IsActive() {
		return false
	}
	c.cluster.Status = rayv1.RayClusterStatus{}
	return true
}

// ManagedBy returns spec.managedBy.
func (s *RayService) ManagedBy() *string { return s.svc.Spec.ManagedBy }

// SetManagedBy sets spec.managedBy.
func (s *RayService) SetManagedBy(v *string) { s.svc.Spec.ManagedBy = v }

// RemoteCopy returns the RayService to create in a worker: its cluster
// suspended, without managedBy or status.
func (s *RayService) RemoteCopy() client.Object {
	cp := jobframework.WorkerCopy(s.svc).(*rayv1.RayService)
	cp.Spec.ManagedBy, cp.Spec.RayClusterSpec.Suspend, cp.Status = nil, ptr.To(true), rayv1.RayServiceStatuses{}
	return cp
}

// SyncStatus copies the worker RayService's status.
func (s *RayService) SyncStatus(remote client.Object) bool {
	r, ok := remote.(*rayv1.RayService)
	if !ok || equality.Semantic.DeepEqual(s.svc.Status, r.Status) {
		return false
	}
	s.svc.Status = *r.Status.DeepCopy()
	return true
}

// ClearStatus drops the Ready condition of a service the worker no longer
// runs.
func (s *RayService) ClearStatus() bool {
	return meta.RemoveStatusCondition(&s.svc.Status.Conditions, string(rayv1.RayServiceReady))
}

// SyncSpec carries an edited serveConfigV2 (the applications a service
// serves) to the worker's RayService, whose operator rolls it out there.
func (s *RayService) SyncSpec(remote client.Object) bool {
	r, ok := remote.(*rayv1.RayService)
	if !ok || r.Spec.ServeConfigV2 == s.svc.Spec.ServeConfigV2 {
		return false
	}
	r.Spec.ServeConfigV2 = s.svc.Spec.ServeConfigV2
	return true
}
