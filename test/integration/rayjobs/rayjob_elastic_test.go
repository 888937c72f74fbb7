package rayjobs

import (
	"context"
	"slices"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// An elastic RayJob whose cluster autoscales keeps running while the Ray
// autoscaler resizes the RayCluster the operator made for it: its
// Workload counts the live cluster's workers (a new slice when they grow,
// the first finished as replaced; lowered in place when they shrink), and
// the cluster's held pods are let go as the admission allows. The Ray
// operator and its autoscaler are played by the test.
func TestElasticRayJobFollowsItsAutoscaledCluster(t *testing.T) {
	s := setUp(t, "8")
	j := rayJob(s, "elastic", 1, false)
	j.Annotations = map[string]string{kueue.ElasticJobAnnotation: "true"}
	spec := j.Spec.RayClusterSpec
	spec.EnableInTreeAutoscaling = ptr.To(true)
	spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To[int32](4)
	gate := []corev1.PodSchedulingGate{{Name: kueue.ElasticJobSchedulingGate}}
	spec.HeadGroupSpec.Template.Spec.SchedulingGates = gate // as the webhook gates them
	spec.WorkerGroupSpecs[0].Template.Spec.SchedulingGates = gate
	s.create(j)
	first := s.waitWorkload(j)
	s.waitRunning(j)
	if got := podSetNames(first); !slices.Equal(got, []string{"head=1", "workers=1", "submitter=1"}) {
		t.Fatalf("podsets %v, want head=1 workers=1 submitter=1", got)
	}
	if cs := first.Spec.PodSets[0].Template.Spec.Containers; len(cs) != 2 || cs[1].Name != "autoscaler" {
		t.Fatalf("the head PodSet does not count the autoscaler: %v", cs)
	}

	// The operator makes the cluster from the job's (admitted) spec.
	if err := s.get(j); err != nil {
		t.Fatal(err)
	}
	rc := &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: j.Name + "-raycluster",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: rayv1.GroupVersion.String(), Kind: "RayJob", Name: j.Name, UID: j.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: *j.Spec.RayClusterSpec.DeepCopy()}
	s.create(rc)
	s.eventually("the job names its cluster", func() error {
		if err := s.get(j); err != nil {
			return err
		}
		j.Status.RayClusterName = rc.Name
		j.Status.JobDeploymentStatus = rayv1.JobDeploymentStatusRunning
		return s.c.Status().Update(context.Background(), j)
	})
	s.growCluster(rc, first)
	if err := s.get(j); err != nil || j.Spec.Suspend {
		t.Fatalf("the job was suspended while its cluster grew (%v)", err)
	}

	s.setWorkers(rc, 2)
	s.waitAdmittedWorkers(j.UID, 2)
}
