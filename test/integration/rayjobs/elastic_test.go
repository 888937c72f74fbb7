package rayjobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// An elastic RayCluster that autoscales keeps running while its worker
// group grows and shrinks: the added workers are admitted as a new Workload
// slice (the first is finished as replaced) and their pods let go; fewer
// workers lower the Workload in place. The Ray operator and its autoscaler
// are played by the test.
func TestElasticRayClusterAutoscales(t *testing.T) {
	s := setUp(t, "6")
	rc := &rayv1.RayCluster{ObjectMeta: s.objectMeta("elastic"), Spec: clusterSpec(1)}
	rc.Annotations = map[string]string{kueue.ElasticJobAnnotation: "true"}
	rc.Spec.WorkerGroupSpecs[0].MaxReplicas = ptr.To[int32](4)
	gate := []corev1.PodSchedulingGate{{Name: kueue.ElasticJobSchedulingGate}}
	rc.Spec.HeadGroupSpec.Template.Spec.SchedulingGates = gate // as the webhook gates them
	rc.Spec.WorkerGroupSpecs[0].Template.Spec.SchedulingGates = gate
	s.create(rc)
	first := s.waitWorkload(rc)
	s.waitRunning(rc)
	s.growCluster(rc, first)
	if err := s.get(rc); err != nil || ptr.Deref(rc.Spec.Suspend, false) {
		t.Fatalf("the cluster was suspended while it grew (%v)", err)
	}

	s.setWorkers(rc, 2)
	s.waitAdmittedWorkers(rc.UID, 2)
}

// growCluster plays the operator and the autoscaler of an elastic
// cluster of one worker admitted as slice first: its head and worker pods
// are let go; at 3 workers a new slice replaces first and the 2 added
// workers are let go too.
func (s *suite) growCluster(rc *rayv1.RayCluster, first *kueue.Workload) {
	s.t.Helper()
	s.rayPods(rc, "head", 1)
	s.rayPods(rc, "workers", 1)
	s.waitFree(rc, 2, 0)
	s.setWorkers(rc, 3)
	s.waitReplaced(first)
	s.rayPods(rc, "workers", 2)
	s.waitFree(rc, 4, 0)
}

// waitReplaced waits until a slice is finished as replaced by a new one.
func (s *suite) waitReplaced(slice *kueue.Workload) {
	s.t.Helper()
	s.eventually("a new slice admitted, "+slice.Name+" finished", func() error {
		if err := s.get(slice); err != nil {
			return err
		}
		if c := findCondition(slice, kueue.WorkloadFinished); c == nil || c.Reason != kueue.WorkloadSliceReplaced {
			return fmt.Errorf("%s: Finished %+v", slice.Name, c)
		}
		return nil
	})
}

// waitAdmittedWorkers waits until the running slice of the job with that
// UID holds quota for n workers.
func (s *suite) waitAdmittedWorkers(uid types.UID, n int32) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("the running slice at %d workers", n), func() error {
		var list kueue.WorkloadList
		if err := s.c.List(context.Background(), &list, client.InNamespace(s.ns), client.MatchingLabels{jobframework.JobUIDLabel: string(uid)}); err != nil {
			return err
		}
		for _, wl := range list.Items {
			if findCondition(&wl, kueue.WorkloadFinished) != nil || wl.Status.Admission == nil {
				continue
			}
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				if psa.Name == "workers" && ptr.Deref(psa.Count, 0) == n {
					return nil
				}
			}
			return fmt.Errorf("admission %+v", wl.Status.Admission.PodSetAssignments)
		}
		return fmt.Errorf("no running slice")
	})
}

func findCondition(wl *kueue.Workload, typ string) *metav1.Condition {
	for i := range wl.Status.Conditions {
		if c := &wl.Status.Conditions[i]; c.Type == typ && c.Status == metav1.ConditionTrue {
			return c
		}
	}
	return nil
}

// setWorkers sets the worker group's replicas, as the autoscaler does.
func (s *suite) setWorkers(rc *rayv1.RayCluster, n int32) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("workers set to %d", n), func() error {
		if err := s.get(rc); err != nil {
			return err
		}
		rc.Spec.WorkerGroupSpecs[0].Replicas = ptr.To(n)
		return s.c.Update(context.Background(), rc)
	})
}

// rayPods creates n pods of a group from the cluster's current template,
// as the Ray operator does, owned by the cluster.
func (s *suite) rayPods(rc *rayv1.RayCluster, group string, n int) {
	s.t.Helper()
	if err := s.get(rc); err != nil {
		s.t.Fatal(err)
	}
	tmpl := rc.Spec.HeadGroupSpec.Template
	if group != "head" {
		tmpl = rc.Spec.WorkerGroupSpecs[0].Template
	}
	labels := maps.Clone(tmpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels["ray.io/cluster"] = rc.Name // as the operator labels its pods
	for range n {
		s.create(&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, GenerateName: rc.Name + "-" + group + "-", Labels: labels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: rc.Name, UID: rc.UID,
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: *tmpl.Spec.DeepCopy(),
		})
	}
	// The operator's status change brings the cluster back to the
	// reconciler.
	s.eventually("the cluster's status counts the new pods", func() error {
		if err := s.get(rc); err != nil {
			return err
		}
		rc.Status.State = rayv1.Ready
		rc.Status.DesiredWorkerReplicas += int32(n)
		return s.c.Status().Update(context.Background(), rc)
	})
}

// waitFree waits for the cluster's pods free of the elastic gate, and
// those held.
func (s *suite) waitFree(rc *rayv1.RayCluster, free, held int) {
	s.t.Helper()
	s.eventually(fmt.Sprintf("%d pods free, %d held", free, held), func() error {
		var list corev1.PodList
		if err := s.c.List(context.Background(), &list, client.InNamespace(s.ns)); err != nil {
			return err
		}
		gotFree, gotHeld := 0, 0
		for _, p := range list.Items {
			if slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.ElasticJobSchedulingGate }) {
				gotHeld++
			} else {
				gotFree++
			}
		}
		if gotFree != free || gotHeld != held {
			return fmt.Errorf("%d free, %d held", gotFree, gotHeld)
		}
		return nil
	})
}
