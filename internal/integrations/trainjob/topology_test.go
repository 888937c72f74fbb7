package trainjob

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestTopologyGateGoesIntoKuotasPatch(t *testing.T) {
	u := trainJob(t, `{"suspend":true,"runtimeRef":{"name":"torch"}}`)
	job := loaded(t, u, parse(t, torchRuntime))
	in := infos(job, "f1")
	for i := range in {
		in[i].SchedulingGates = []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}}
	}
	if err := job.RunWithPodSetsInfo(in); err != nil {
		t.Fatal(err)
	}
	if v := nested(kuotaPatch(t, u)["node"], rjPatchGatesPath); toJSON(t, v) != `[{"name":"kueue.x-k8s.io/topology"}]` {
		t.Errorf("scheduling gates of the node patch: %s", toJSON(t, v))
	}
	ps, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	if ix := job.PodIndex(&ps[0]); ix.Label != batchv1.JobCompletionIndexAnnotation || ix.SubGroupCount == nil {
		t.Errorf("index %+v, want the JobSet's completion index and replica count", ix)
	}
}
