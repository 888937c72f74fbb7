package appwrapper

import (
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A worker copy is suspended, without managedBy, status or UID; the
// worker's status is mirrored, and its quota hold dropped once it is gone.
func TestRemoteAppWrapper(t *testing.T) {
	aw := newAppWrapper(t)
	aw.UID, aw.Spec.ManagedBy = "uid", ptr.To(jobframework.MultiKueueManagedBy)
	running := aw.DeepCopy()
	meta.SetStatusCondition(&running.Status.Conditions, metav1.Condition{Type: string(awv1beta2.QuotaReserved), Status: metav1.ConditionTrue, Reason: "r"})
	j := &AppWrapper{aw}
	cp := &AppWrapper{j.RemoteCopy().(*awv1beta2.AppWrapper)}
	if cp.ManagedBy() != nil || !cp.IsSuspended() || cp.aw.UID != "" || len(cp.aw.Status.Conditions) != 0 {
		t.Errorf("worker copy %+v", cp.aw)
	}
	if !j.SyncStatus(running) || !j.IsActive() || j.SyncStatus(running) {
		t.Errorf("status not mirrored once")
	}
	if !j.ClearStatus() || j.IsActive() || j.ClearStatus() {
		t.Errorf("status not cleared once")
	}
}
