package ray

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil/jobtest"
)

// checkJobUID checks that every template carries the job-uid label with
// uid (want true) or none (want false).
func checkJobUID(t *testing.T, templates map[string]*corev1.PodTemplateSpec, uid string, want bool) {
	t.Helper()
	for name, tpl := range templates {
		got, ok := tpl.Labels[jobframework.PodJobUIDLabel]
		if want && got != uid {
			t.Errorf("%s template: label %s=%q, want the job's UID %q", name, jobframework.PodJobUIDLabel, got, uid)
		}
		if !want && ok {
			t.Errorf("%s template: label %s=%q left after the job stopped", name, jobframework.PodJobUIDLabel, got)
		}
	}
}

func clusterTemplateMap(head *corev1.PodTemplateSpec, workers ...*corev1.PodTemplateSpec) map[string]*corev1.PodTemplateSpec {
	out := map[string]*corev1.PodTemplateSpec{"head": head}
	for i, w := range workers {
		out[fmt.Sprintf("worker %d", i)] = w
	}
	return out
}

// The pods the operator makes through a RayJob's RayCluster and
// submitter Job carry the RayJob's UID: the head, worker group and
// submitter templates (the operator's default submitter, which Kuota
// writes) get it on admission and lose it when the job stops.
func TestRayJobTemplatesCarryTheJobUID(t *testing.T) {
	obj := newRayJob()
	obj.UID = "rayjob-uid"
	job := NewRayJob(obj)
	wl := jobtest.StartAdmitted(t, job, RayJobGVK)
	spec := obj.Spec.RayClusterSpec
	templates := func() map[string]*corev1.PodTemplateSpec {
		m := clusterTemplateMap(&spec.HeadGroupSpec.Template, &spec.WorkerGroupSpecs[0].Template, &spec.WorkerGroupSpecs[1].Template)
		m["submitter"] = obj.Spec.SubmitterPodTemplate
		return m
	}
	if obj.Spec.SubmitterPodTemplate == nil {
		t.Fatal("the admission must write the submitter's template")
	}
	checkJobUID(t, templates(), "rayjob-uid", true)
	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring reported no change")
	}
	checkJobUID(t, templates(), "", false)
}

// A RayCluster's and a RayService's head and worker group templates carry
// the object's UID while it runs.
func TestClusterTemplatesCarryTheJobUID(t *testing.T) {
	rc := newRayCluster()
	rc.UID = "raycluster-uid"
	rs := newRayService()
	rs.UID = "rayservice-uid"
	for _, c := range []struct {
		job  jobframework.Job
		in   jobframework.Integration
		uid  string
		tpls map[string]*corev1.PodTemplateSpec
	}{
		{NewRayCluster(rc), RayClusterIntegration, "raycluster-uid", clusterTemplateMap(&rc.Spec.HeadGroupSpec.Template,
			&rc.Spec.WorkerGroupSpecs[0].Template, &rc.Spec.WorkerGroupSpecs[1].Template)},
		{NewRayService(rs), RayServiceIntegration, "rayservice-uid", clusterTemplateMap(&rs.Spec.RayClusterSpec.HeadGroupSpec.Template,
			&rs.Spec.RayClusterSpec.WorkerGroupSpecs[0].Template, &rs.Spec.RayClusterSpec.WorkerGroupSpecs[1].Template)},
	} {
		t.Run(c.in.GVK.Kind, func(t *testing.T) {
			wl := jobtest.StartAdmitted(t, c.job, c.in.GVK)
			checkJobUID(t, c.tpls, c.uid, true)
			c.job.Suspend()
			if !c.job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
				t.Fatal("restoring reported no change")
			}
			checkJobUID(t, c.tpls, "", false)
		})
	}
}
