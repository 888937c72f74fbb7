package spark

import (
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil/jobtest"
)

// The executors belong to the driver pod, which may be gone while they
// still terminate: the driver's and the executors' labels carry the
// application's UID while it runs, and lose it when it stops.
func TestDriverAndExecutorLabelsCarryTheApplicationUID(t *testing.T) {
	app := newApp()
	app.UID = "app-uid"
	job := New(app)
	wl := jobtest.StartAdmitted(t, job, GVK)
	roles := map[string]*sparkv1beta2.SparkPodSpec{"driver": &app.Spec.Driver.SparkPodSpec, "executor": &app.Spec.Executor.SparkPodSpec}
	for name, ps := range roles {
		if got := ps.Labels[jobframework.PodJobUIDLabel]; got != "app-uid" {
			t.Errorf("spec.%s.labels: %s=%q, want the application's UID", name, jobframework.PodJobUIDLabel, got)
		}
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring reported no change")
	}
	for name, ps := range roles {
		if got, ok := ps.Labels[jobframework.PodJobUIDLabel]; ok {
			t.Errorf("spec.%s.labels: %s=%q left after stopping", name, jobframework.PodJobUIDLabel, got)
		}
	}
}
