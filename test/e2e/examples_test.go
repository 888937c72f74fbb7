package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Kueue's getting-started and workload examples, applied unchanged (in
// namespace default, with the quick start's queues: 9 cpus), run as Kueue
// runs them: the quick-start Job completes; the partial-admission Job (20
// pods of 1 cpu, at least 5) is admitted with the 9 that fit and completes;
// a plain pod and a pod group succeed; the Deployment's and the
// StatefulSet's pods are admitted and run.
func TestKueueWorkloadExamplesRun(t *testing.T) {
	applyExample(t, "getting-started/quick-start-setup.yaml")

	applyExample(t, "getting-started/quick-start-job.yaml")
	waitComplete(t, "default", "sample-job", 2*time.Minute)
	// A completed Job's Workload finishes, and gives its 3 cpus back, a
	// moment later: until then 6 of the partial Job's pods fit, not 9.
	eventually(t, 30*time.Second, "the quick start's ClusterQueue empty again", func() error {
		var cq kueue.ClusterQueue
		if err := suite.client.Get(context.Background(), client.ObjectKey{Name: "cluster-queue"}, &cq); err != nil {
			return err
		}
		if cq.Status.ReservingWorkloads != 0 {
			return fmt.Errorf("%d workloads still reserve quota", cq.Status.ReservingWorkloads)
		}
		return nil
	})

	applyExample(t, "jobs/sample-job-partial-admission.yaml")
	eventually(t, 60*time.Second, "the partial-admission Job admitted with 9 pods", func() error {
		j := getJob(t, "default", "sample-job-partial-admission")
		wl, err := workloadOf(t, j)
		if err != nil {
			return err
		}
		if wl.Status.Admission == nil {
			return fmt.Errorf("not admitted")
		}
		if n := ptr.Deref(wl.Status.Admission.PodSetAssignments[0].Count, 0); n != 9 {
			return fmt.Errorf("admitted with %d pods, want the 9 that fit", n)
		}
		return nil
	})
	waitComplete(t, "default", "sample-job-partial-admission", 2*time.Minute)

	pod := applyExample(t, "pods-kueue/kueue-pod.yaml")
	group := applyExample(t, "pods-kueue/kueue-pod-group.yaml")
	for _, p := range append(pod, group...) {
		name := p.GetName()
		eventually(t, 90*time.Second, "pod "+name+" succeeded", func() error {
			var got corev1.Pod
			if err := suite.client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &got); err != nil {
				return err
			}
			if got.Status.Phase != corev1.PodSucceeded {
				return fmt.Errorf("phase %s, gates %v", got.Status.Phase, got.Spec.SchedulingGates)
			}
			return nil
		})
	}

	applyExample(t, "serving-workloads/sample-deployment.yaml")
	applyExample(t, "serving-workloads/sample-statefulset.yaml")
	eventually(t, 90*time.Second, "the Deployment's and the StatefulSet's pods running", func() error {
		var list corev1.PodList
		if err := suite.client.List(context.Background(), &list, client.InNamespace("default"), client.MatchingLabels{"app": "nginx"}); err != nil {
			return err
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning && len(p.Spec.SchedulingGates) == 0 && p.DeletionTimestamp.IsZero() {
				running++
			}
		}
		if running != 6 {
			return fmt.Errorf("%d of 6 pods running", running)
		}
		return nil
	})
}

// applyExample creates the objects of one of Kueue's example files, as
// kubectl create does (in namespace default unless they name one; a
// generated name is generated), and deletes them at
// cleanup; it returns them as created.
func applyExample(t *testing.T, rel string) []*unstructured.Unstructured {
	t.Helper()
	objs := readExample(t, rel)
	for _, obj := range objs {
		if namespaced, err := suite.client.IsObjectNamespaced(obj); err == nil && namespaced && obj.GetNamespace() == "" {
			obj.SetNamespace("default")
		}
		if err := suite.client.Create(context.Background(), obj); err != nil {
			t.Fatalf("%s: creating %s %s: %v", rel, obj.GetKind(), obj.GetName()+obj.GetGenerateName(), err)
		}
	}
	t.Cleanup(func() {
		for i := len(objs) - 1; i >= 0; i-- {
			_ = suite.client.Delete(context.Background(), objs[i], client.PropagationPolicy("Background"))
		}
		waitGone(t, objs)
	})
	return objs
}

// waitGone waits (up to a minute) until the cluster-scoped objects are
// gone, their finalizers done, so that the next test may create objects
// of the same names (the examples share flavor and queue names).
func waitGone(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, obj := range objs {
		if namespaced, err := suite.client.IsObjectNamespaced(obj); err != nil || namespaced {
			continue
		}
		for {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(obj.GroupVersionKind())
			err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(obj), u)
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Logf("%s %s is still there a minute after its deletion (err %v)", obj.GetKind(), obj.GetName(), err)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
