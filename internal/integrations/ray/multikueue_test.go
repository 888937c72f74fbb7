package ray

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Worker copies are suspended, without managedBy, status or UID; the
// worker's status is mirrored, and cleared once it is gone.
func TestRemoteRayJobAndCluster(t *testing.T) {
	job := newRayJob()
	job.UID, job.Spec.ManagedBy, job.Spec.Suspend = "uid", ptr.To(jobframework.MultiKueueManagedBy), false
	running := job.DeepCopy()
	running.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
	cluster := newRayCluster()
	cluster.UID, cluster.Spec.ManagedBy = "uid", ptr.To(jobframework.MultiKueueManagedBy)
	ready := cluster.DeepCopy()
	ready.Status.State = rayv1.Ready
	svc := newRayService()
	svc.UID, svc.Spec.ManagedBy = "uid", ptr.To(jobframework.MultiKueueManagedBy)
	serving := svc.DeepCopy()
	meta.SetStatusCondition(&serving.Status.Conditions, metav1.Condition{Type: string(rayv1.RayServiceReady), Status: metav1.ConditionTrue, Reason: "r"})
	for name, tc := range map[string]struct {
		j      jobframework.JobWithRemote
		remote jobframework.JobWithRemote
		wrap   func(o any) jobframework.JobWithRemote
	}{
		"RayJob": {&RayJob{job: job}, &RayJob{job: running}, func(o any) jobframework.JobWithRemote { return &RayJob{job: o.(*rayv1.RayJob)} }},
		"RayCluster": {&RayCluster{cluster}, &RayCluster{ready},
			func(o any) jobframework.JobWithRemote { return &RayCluster{o.(*rayv1.RayCluster)} }},
		"RayService": {&RayService{svc}, &RayService{serving},
			func(o any) jobframework.JobWithRemote { return &RayService{o.(*rayv1.RayService)} }},
	} {
		t.Run(name, func(t *testing.T) {
			cp := tc.wrap(tc.j.RemoteCopy())
			if cp.ManagedBy() != nil || !cp.IsSuspended() || cp.Object().GetUID() != "" || cp.IsActive() {
				t.Errorf("worker copy %+v", cp.Object())
			}
			if !tc.j.SyncStatus(tc.remote.Object()) || !tc.j.IsActive() || tc.j.SyncStatus(tc.remote.Object()) {
				t.Errorf("status not mirrored once")
			}
			if !tc.j.ClearStatus() || tc.j.IsActive() || tc.j.ClearStatus() {
				t.Errorf("status not cleared once")
			}
		})
	}
}

func TestRayServiceForwardsItsServeConfig(t *testing.T) {
	local := newRayService()
	local.Spec.ServeConfigV2 = "applications: [{name: v2}]"
	remote := local.DeepCopy()
	remote.Spec.ServeConfigV2 = "applications: [{name: v1}]"
	remote.Spec.RayClusterSpec.Suspend = nil
	svc := &RayService{local}
	if !svc.SyncSpec(remote) || remote.Spec.ServeConfigV2 != local.Spec.ServeConfigV2 {
		t.Fatalf("the worker's serveConfigV2 is %q, want the manager's edit", remote.Spec.ServeConfigV2)
	}
	if svc.SyncSpec(remote) {
		t.Errorf("an unchanged serveConfigV2 is written again")
	}
	if remote.Spec.RayClusterSpec.Suspend != nil {
		t.Errorf("the sync touched more than serveConfigV2")
	}
}
