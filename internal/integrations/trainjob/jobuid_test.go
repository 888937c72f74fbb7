package trainjob

import (
	"testing"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil/jobtest"
)

// The trainer's pods belong to the Jobs of the TrainJob's JobSet: every
// replicated job's pod template override in Kuota's runtime patch labels
// them with the TrainJob's UID, and stopping the job removes the patch.
func TestRuntimePatchLabelsPodsWithTheTrainJobUID(t *testing.T) {
	u := trainJob(t, `{"suspend":true,"runtimeRef":{"name":"torch"}}`)
	u.SetUID("trainjob-uid")
	job := loaded(t, u, parse(t, torchRuntime))
	wl := jobtest.StartAdmitted(t, job, GVK)
	patch := kuotaPatch(t, u)
	if len(patch) != len(job.jobs) {
		t.Fatalf("Kuota's patch covers %d replicated jobs, want %d", len(patch), len(job.jobs))
	}
	for name, rj := range patch {
		labels, _ := nested(rj, append(rjPatchPodMetaPath, "labels")).(map[string]any)
		if got := labels[jobframework.PodJobUIDLabel]; got != "trainjob-uid" {
			t.Errorf("replicated job %s: label %s=%v, want the TrainJob's UID (labels %v)", name, jobframework.PodJobUIDLabel, got, labels)
		}
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) || kuotaPatch(t, u) != nil {
		t.Fatalf("stopping must remove Kuota's patch: %v", kuotaPatch(t, u))
	}
}
