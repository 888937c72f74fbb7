package framework

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// HoldFinalizer stands in for a long termination grace period: a pod
// carrying it stays, being deleted, until the test removes it.
const HoldFinalizer = "test.kuota.dev/hold"

// Deletion is an admitted job being deleted while one of its pods (created
// by the test, carrying HoldFinalizer and the labels of the template Kuota
// admitted) still terminates.
type Deletion struct {
	Client       client.Client
	ClusterQueue string
	Job          client.Object
	Workload     *kueue.Workload
	Pod          *corev1.Pod
	// Restart, when set, restarts the manager right after the job is
	// deleted and again while the pod terminates.
	Restart func() error
}

// Check deletes the job (its children go by garbage collection) and checks
// that its Workload keeps the resource-in-use finalizer and the
// ClusterQueue its reservation while the pod runs and while it terminates,
// across the restarts, then that both go once the pod is gone.
func (d Deletion) Check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "the ClusterQueue reserves for the job", func() error { return Reserving(d.Client, d.ClusterQueue, 1) })
	if err := d.Client.Delete(ctx, d.Job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	d.restart(t, "after the job's deletion")
	HoldsQuota(t, d.Client, client.ObjectKeyFromObject(d.Workload), d.ClusterQueue, "while the pod runs")
	if err := d.Client.Delete(ctx, d.Pod); err != nil {
		t.Fatal(err)
	}
	d.restart(t, "while the pod terminates")
	HoldsQuota(t, d.Client, client.ObjectKeyFromObject(d.Workload), d.ClusterQueue, "while the pod terminates")
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "the pod's grace period ends", func() error {
		var p corev1.Pod
		if err := d.Client.Get(ctx, client.ObjectKeyFromObject(d.Pod), &p); err != nil {
			return client.IgnoreNotFound(err)
		}
		p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == HoldFinalizer })
		return d.Client.Update(ctx, &p)
	})
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "the Workload goes once the pod is gone", func() error {
		var got kueue.Workload
		if err := d.Client.Get(ctx, client.ObjectKeyFromObject(d.Workload), &got); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v), finalizers %v", err, got.Finalizers)
		}
		return nil
	})
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "the ClusterQueue reserves nothing", func() error { return Reserving(d.Client, d.ClusterQueue, 0) })
}

func (d Deletion) restart(t *testing.T, when string) {
	t.Helper()
	if d.Restart == nil {
		return
	}
	if err := d.Restart(); err != nil {
		t.Fatalf("restarting the manager %s: %v", when, err)
	}
}

// Reserving checks that ClusterQueue cq reserves quota for n Workloads.
func Reserving(c client.Client, cq string, n int32) error {
	var q kueue.ClusterQueue
	if err := c.Get(context.Background(), client.ObjectKey{Name: cq}, &q); err != nil {
		return err
	}
	if q.Status.ReservingWorkloads != n {
		return fmt.Errorf("ClusterQueue %s reserves for %d workloads, want %d", cq, q.Status.ReservingWorkloads, n)
	}
	return nil
}

// HoldsQuota checks, for longer than the reconciler takes to look at a
// job's pods again, that the Workload at key stays with its finalizer and
// ClusterQueue cq still reserves for it (and for it alone).
func HoldsQuota(t *testing.T, c client.Client, key client.ObjectKey, cq, when string) {
	t.Helper()
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		var got kueue.Workload
		err := c.Get(context.Background(), key, &got)
		if err != nil || !slices.Contains(got.Finalizers, kueue.ResourceInUseFinalizerName) {
			t.Fatalf("%s, the deleted job's Workload must stay with its finalizer: %v %v", when, err, got.Finalizers)
		}
		if err := Reserving(c, cq, 1); err != nil {
			t.Fatalf("%s, the ClusterQueue must still reserve for the Workload: %v", when, err)
		}
	}
}

// EachManager runs body as two subtests: "running manager" (restarted
// false) and "restarted manager" (restarted true: body restarts the
// manager in the middle, with Restartable).
func EachManager(t *testing.T, body func(t *testing.T, restarted bool)) {
	t.Run("running manager", func(t *testing.T) { body(t, false) })
	t.Run("restarted manager", func(t *testing.T) { body(t, true) })
}

// Restartable returns a function that restarts m (and then the manager
// that replaced it); when t ends, the latest one is stopped.
func Restartable(t *testing.T, m *Manager) func() error {
	cur := m
	t.Cleanup(func() {
		if err := cur.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	return func() error {
		next, err := cur.Restart()
		if err != nil {
			return err
		}
		cur = next
		return nil
	}
}
