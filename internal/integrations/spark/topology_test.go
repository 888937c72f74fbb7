package spark

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestTopologyGateGoesIntoThePodTemplatesAndBack(t *testing.T) {
	app := newApp()
	original := app.DeepCopy()
	job := New(app)
	podSets, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	infos := admission(podSets)
	for i := range infos {
		infos[i].SchedulingGates = []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}}
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatal(err)
	}
	for name, ps := range map[string]*corev1.PodTemplateSpec{"driver": app.Spec.Driver.Template, "executor": app.Spec.Executor.Template} {
		if ps == nil || len(ps.Spec.SchedulingGates) != 1 || ps.Spec.SchedulingGates[0].Name != jobframework.TopologyGate {
			t.Errorf("spec.%s.template after a topology admission: %+v, want the topology gate", name, ps)
		}
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(restoreInfos(podSets)) {
		t.Error("restoring reported no change")
	}
	if !equality.Semantic.DeepEqual(app.Spec.Driver, original.Spec.Driver) || !equality.Semantic.DeepEqual(app.Spec.Executor, original.Spec.Executor) {
		t.Errorf("restored driver template %+v executor template %+v, want the original ones", app.Spec.Driver.Template, app.Spec.Executor.Template)
	}
}
