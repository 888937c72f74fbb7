package kubeflowjobs

import (
	"maps"
	"testing"

	mpi "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The MPI Operator runs an MPIJob's launcher as a batch Job it owns; the
// launcher pod is controlled by that Job, which garbage collection deletes
// with the MPIJob while the pod still terminates. The pod carries the
// labels of the launcher template Kuota admitted, the MPIJob's UID among
// them: the deleted MPIJob's Workload keeps its finalizer, and its quota,
// until the pod is gone, also when the manager restarts in the middle of
// the deletion.
func TestDeletedMPIJobHoldsQuotaWhileLauncherPodTerminates(t *testing.T) {
	framework.EachManager(t, func(t *testing.T, restart bool) {
		s := setUp(t, "10")
		j := mpiJob(s, "gone", 1)
		s.create(j)
		s.waitRunning(j)
		s.operator(j, running)
		wl := s.waitWorkload(j)
		if err := s.get(j); err != nil {
			t.Fatal(err)
		}
		launcher := j.Spec.MPIReplicaSpecs[mpi.MPIReplicaTypeLauncher].Template
		if got := launcher.Labels[jobframework.PodJobUIDLabel]; got != string(j.UID) {
			t.Fatalf("launcher template label %s=%q, want the MPIJob's UID %s", jobframework.PodJobUIDLabel, got, j.UID)
		}
		const jobUID = "5d0c7a9e-2b41-4f6e-8c3a-7e1f0b9d4a26"
		labels := maps.Clone(launcher.Labels)
		labels["batch.kubernetes.io/controller-uid"] = jobUID
		labels["batch.kubernetes.io/job-name"] = "gone-launcher"
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "gone-launcher-x7k2p", Finalizers: []string{framework.HoldFinalizer},
				Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "gone-launcher",
					UID: jobUID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *launcher.Spec.DeepCopy(),
		}
		s.create(pod)
		d := framework.Deletion{Client: s.c, ClusterQueue: s.cq, Job: j, Workload: wl, Pod: pod}
		if restart {
			d.Restart = framework.Restartable(t, s.m)
		}
		d.Check(t)
	})
}
