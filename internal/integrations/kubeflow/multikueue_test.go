package kubeflow

import (
	"testing"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	kftraining "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A worker copy keeps the spec, is suspended, has no managedBy, no status
// and none of the manager's server-set metadata; the worker's status is
// mirrored; clearing it makes a stopped job inactive (and restorable).
func TestRemoteKubeflowJobs(t *testing.T) {
	now := metav1.Now()
	pt := pytorch(map[kftraining.ReplicaType]*kftraining.ReplicaSpec{"Master": v1Spec(ptr.To[int32](1), "1")})
	pt.UID, pt.ResourceVersion = "uid", "7"
	pt.Spec.RunPolicy.ManagedBy = ptr.To(jobframework.MultiKueueManagedBy)
	pt.Spec.RunPolicy.Suspend = ptr.To(false)
	pt.Status.StartTime = &now
	running := pt.DeepCopy()
	running.Status.ReplicaStatuses = map[kftraining.ReplicaType]*kftraining.ReplicaStatus{"Master": {Active: 1}}
	mj := mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{"Launcher": {Replicas: ptr.To[int32](1), Template: podTemplate("1")}})
	mj.UID = "uid"
	mj.Spec.RunPolicy.ManagedBy = ptr.To(jobframework.MultiKueueManagedBy)
	mjRunning := mj.DeepCopy()
	mjRunning.Status.StartTime = &now
	mjRunning.Status.ReplicaStatuses = map[mpi.MPIReplicaType]*mpi.ReplicaStatus{"Launcher": {Active: 1}}
	for name, tc := range map[string]struct {
		job, remote client.Object
		in          jobframework.Integration
	}{
		"PyTorchJob": {pt, running, PyTorchJobIntegration},
		"MPIJob":     {mj, mjRunning, MPIJobIntegration},
	} {
		t.Run(name, func(t *testing.T) {
			j := tc.in.NewJob(tc.job).(jobframework.JobWithRemote)
			cp := tc.in.NewJob(j.RemoteCopy()).(jobframework.JobWithRemote)
			if cp.ManagedBy() != nil || !cp.IsSuspended() || cp.Object().GetUID() != "" || cp.Object().GetResourceVersion() != "" || cp.IsActive() {
				t.Errorf("worker copy %+v", cp.Object())
			}
			if j.ManagedBy() == nil {
				t.Errorf("the manager's job was changed")
			}
			if !j.SyncStatus(tc.remote) || !j.IsActive() || j.SyncStatus(tc.remote) {
				t.Errorf("status not mirrored once: active %v", j.IsActive())
			}
			if !j.ClearStatus() || j.IsActive() || j.ClearStatus() {
				t.Errorf("status not cleared once: active %v", j.IsActive())
			}
		})
	}
}
