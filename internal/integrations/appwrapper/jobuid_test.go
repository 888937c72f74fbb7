package appwrapper

import (
	"testing"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil/jobtest"
)

// The pods of the objects an AppWrapper wraps belong to those objects:
// the podSetInfos the AppWrapper controller merges into every pod set's
// template label them with the AppWrapper's UID; stopping clears them.
func TestPodSetInfosCarryTheAppWrapperUID(t *testing.T) {
	aw := newAppWrapper(t)
	aw.UID = "aw-uid"
	job := New(aw)
	wl := jobtest.StartAdmitted(t, job, GVK)
	n := 0
	for i, c := range aw.Spec.Components {
		for k, info := range c.PodSetInfos {
			n++
			if got := info.Labels[jobframework.PodJobUIDLabel]; got != "aw-uid" {
				t.Errorf("component %d pod set %d: label %s=%q, want the AppWrapper's UID", i, k, jobframework.PodJobUIDLabel, got)
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d podSetInfos, want 2", n)
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring reported no change")
	}
	for i, c := range aw.Spec.Components {
		if c.PodSetInfos != nil {
			t.Errorf("component %d: podSetInfos %+v left after stopping", i, c.PodSetInfos)
		}
	}
}
