package kubeflow

import (
	"testing"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil/jobtest"
)

// An MPIJob's launcher pod belongs to the launcher Job the MPI Operator
// makes: the launcher's and the workers' templates carry the MPIJob's UID
// while it runs, and lose it when it stops.
func TestMPIJobTemplatesCarryTheJobUID(t *testing.T) {
	mj := mpiJob(map[mpi.MPIReplicaType]*mpi.ReplicaSpec{
		mpi.MPIReplicaTypeLauncher: {Template: podTemplate("1")},
		mpi.MPIReplicaTypeWorker:   {Replicas: ptr.To[int32](2), Template: podTemplate("2")},
	})
	mj.UID = "mpijob-uid"
	job := MPIJobIntegration.NewJob(mj)
	wl := jobtest.StartAdmitted(t, job, MPIJobGVK)
	for typ, spec := range mj.Spec.MPIReplicaSpecs {
		if got := spec.Template.Labels[jobframework.PodJobUIDLabel]; got != "mpijob-uid" {
			t.Errorf("%s template: label %s=%q, want the MPIJob's UID", typ, jobframework.PodJobUIDLabel, got)
		}
	}
	job.Suspend()
	if !job.RestorePodSetsInfo(jobframework.RestoreInfos(wl)) {
		t.Fatal("restoring must report a change")
	}
	for typ, spec := range mj.Spec.MPIReplicaSpecs {
		if got, ok := spec.Template.Labels[jobframework.PodJobUIDLabel]; ok {
			t.Errorf("%s template: label %s=%q left after the job stopped", typ, jobframework.PodJobUIDLabel, got)
		}
	}
}
