package rayjobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// holdFinalizer stands in for a long termination grace period: a pod
// carrying it stays, being deleted, until the test removes it.
const holdFinalizer = "test.kuota.dev/hold"

// The head pod of a RayJob's cluster is owned by the RayCluster, which
// garbage collection deletes with the RayJob while the pod still
// terminates. The pod carries the labels of the head template Kuota
// admitted, the RayJob's UID among them: the deleted RayJob's Workload
// keeps its finalizer, and its quota, until the pod is gone.
func TestDeletedRayJobHoldsQuotaWhileClusterPodsTerminate(t *testing.T) {
	s := setUp(t, "10")
	ctx := context.Background()
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
		ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "gone-raycluster-head", Finalizers: []string{holdFinalizer},
			Labels: maps.Clone(head.Labels),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "ray.io/v1", Kind: "RayCluster", Name: "gone-raycluster",
				UID: "0b7e2c1a-6f39-4c55-9d43-raycluster01", Controller: ptr.To(true)}}},
		Spec: *head.Spec.DeepCopy(),
	}
	s.create(pod)
	s.eventually("the ClusterQueue reserves for the RayJob", func() error {
		var q kueue.ClusterQueue
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.cq}, &q); err != nil || q.Status.ReservingWorkloads != 1 {
			return fmt.Errorf("reserving for %d workloads (%v)", q.Status.ReservingWorkloads, err)
		}
		return nil
	})
	if err := s.c.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	s.holdsQuota(wl, "while the cluster's head pod runs")
	if err := s.c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	s.holdsQuota(wl, "while the cluster's head pod terminates")

	s.eventually("the head pod's grace period ends", func() error {
		var p corev1.Pod
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return client.IgnoreNotFound(err)
		}
		p.Finalizers = nil
		return s.c.Update(ctx, &p)
	})
	s.eventually("the Workload goes once the pod is gone", func() error {
		var got kueue.Workload
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(wl), &got); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v), finalizers %v", err, got.Finalizers)
		}
		return nil
	})
	s.waitQuotaFree()
}

// holdsQuota checks, for longer than the reconciler takes to look at a
// job's pods again, that the Workload stays with its finalizer and the
// ClusterQueue still reserves quota for it.
func (s *suite) holdsQuota(wl *kueue.Workload, when string) {
	s.t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		var got kueue.Workload
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(wl), &got); err != nil || !slices.Contains(got.Finalizers, kueue.ResourceInUseFinalizerName) {
			s.t.Fatalf("%s, the deleted RayJob's Workload must stay with its finalizer: %v %v", when, err, got.Finalizers)
		}
		var q kueue.ClusterQueue
		if err := s.c.Get(ctx, client.ObjectKey{Name: s.cq}, &q); err != nil || q.Status.ReservingWorkloads != 1 {
			s.t.Fatalf("%s, the ClusterQueue must still reserve for the Workload: %v reserving %d", when, err, q.Status.ReservingWorkloads)
		}
	}
}
