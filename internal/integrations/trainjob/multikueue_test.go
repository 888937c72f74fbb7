package trainjob

import (
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A worker copy is suspended, without managedBy, status or UID; the
// worker's status is mirrored, and its running pods cleared once it is
// gone.
func TestRemoteTrainJob(t *testing.T) {
	u := trainJob(t, `{"runtimeRef":{"name":"torch"},"managedBy":"kueue.x-k8s.io/multikueue","suspend":false}`)
	u.SetUID("uid")
	running := u.DeepCopy()
	setAt(running, []any{map[string]any{"name": "node", "active": int64(2)}}, jobsStatusPath)
	j := New(u).(*TrainJob)
	if ptr.Deref(j.ManagedBy(), "") != jobframework.MultiKueueManagedBy {
		t.Fatalf("managedBy %v", j.ManagedBy())
	}
	cp := New(j.RemoteCopy()).(*TrainJob)
	if cp.ManagedBy() != nil || !cp.IsSuspended() || cp.u.GetUID() != "" || cp.u.Object["status"] != nil {
		t.Errorf("worker copy %v", cp.u.Object)
	}
	if j.ManagedBy() == nil || j.IsSuspended() {
		t.Errorf("the manager's TrainJob was changed")
	}
	if !j.SyncStatus(running) || !j.IsActive() || j.SyncStatus(running) {
		t.Errorf("status not mirrored once")
	}
	if !j.ClearStatus() || j.IsActive() || j.ClearStatus() {
		t.Errorf("status not cleared once")
	}
	j.SetManagedBy(nil)
	if j.ManagedBy() != nil {
		t.Errorf("managedBy not removed")
	}
}
