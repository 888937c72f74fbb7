package rayjobs

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// The head pod of a RayJob's cluster is owned by the RayCluster, which
// garbage collection deletes with the RayJob while the pod still
// terminates. The pod carries the labels of the head template Kuota
// admitted, the RayJob's UID among them: the deleted RayJob's Workload
// keeps its finalizer, and its quota, until the pod is gone, also when the
// manager restarts in the middle of the deletion.
func TestDeletedRayJobHoldsQuotaWhileClusterPodsTerminate(t *testing.T) {
	framework.EachManager(t, func(t *testing.T, restart bool) {
		s := setUp(t, "10")
		j := rayJob(s, "gone", 1, false)
		s.create(j)
		s.waitRunning(j)
		wl := s.waitWorkload(j)
		if err := s.get(j); err != nil {
			t.Fatal(err)
		}
		head := j.Spec.RayClusterSpec.HeadGroupSpec.Template
		if got := head.Labels[jobframework.PodJobUIDLabel]; got != string(j.UID) {
			t.Fatalf("head template label %s=%q, want the RayJob's UID %s", jobframework.PodJobUIDLabel, got, j.UID)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "gone-raycluster-head", Finalizers: []string{framework.HoldFinalizer},
				Labels: maps.Clone(head.Labels),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "gone-raycluster",
					UID: "0b7e2c1a-6f39-4c55-9d43-raycluster01", Controller: ptr.To(true)}}},
			Spec: *head.Spec.DeepCopy(),
		}
		s.create(pod)
		d := framework.Deletion{Client: s.c, ClusterQueue: s.cq, Job: j, Workload: wl, Pod: pod}
		if restart {
			d.Restart = framework.Restartable(t, s.m)
		}
		d.Check(t)
	})
}
