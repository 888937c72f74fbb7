package appwrapper

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestTopologyGateGoesIntoThePodSetInfos(t *testing.T) {
	aw := newAppWrapper(t)
	job := New(aw)
	gate := []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}}
	infos := []jobframework.PodSetInfo{{Name: "aw-0", Count: 2, SchedulingGates: gate}, {Name: "aw-1", Count: 3}}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	if g := aw.Spec.Components[0].PodSetInfos[0].SchedulingGates; len(g) != 1 || g[0].Name != jobframework.TopologyGate {
		t.Errorf("component 0 gates %v, want the topology gate", g)
	}
	if g := aw.Spec.Components[1].PodSetInfos[0].SchedulingGates; len(g) != 0 {
		t.Errorf("component 1 gates %v, want none", g)
	}
}
