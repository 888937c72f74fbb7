package manager

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

// Deleting an admitted workload gives its quota back: a pending workload is
// admitted in its place.
func TestDeletingAdmittedWorkloadReleasesQuota(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "2")
	create(t, newWorkload(ns, "first", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "first", cq)
	create(t, newWorkload(ns, "second", "lq", 2, "1", 0))
	waitPending(t, ns, "second", kueue.WorkloadReasonWaitingForQuota)

	if err := env.Client.Delete(context.Background(), &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "first"}}); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, ns, "second", cq)
	waitUsage(t, cq, fl, 1, "2", "0")
}

// A ClusterQueue being deleted stops admitting and goes away only once no
// workload holds quota in it; its flavor stays while the queue names it.
func TestClusterQueueDeletionWaitsForItsWorkloads(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "4"), localQueue(ns, "lq", cq))
	create(t, newWorkload(ns, "running", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "running", cq)

	if err := env.Client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}}); err != nil {
		t.Fatal(err)
	}
	waitClusterQueueActive(t, cq, metav1.ConditionFalse, "Terminating")
	create(t, newWorkload(ns, "late", "lq", 1, "1", 0))
	stayPending(t, ns, "late")
	var rf kueue.ResourceFlavor
	if err := env.Client.Get(ctx, objectKey("", fl), &rf); err != nil {
		t.Fatalf("the flavor of a ClusterQueue still in use must stay: %v", err)
	}

	finish(t, ns, "running")
	eventually(t, 45*time.Second, "the ClusterQueue and then its flavor are gone", func() error {
		if err := env.Client.Get(ctx, objectKey("", cq), &kueue.ClusterQueue{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ClusterQueue still there (%v)", err)
		}
		if err := env.Client.Get(ctx, objectKey("", fl), &kueue.ResourceFlavor{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ResourceFlavor still there (%v)", err)
		}
		return nil
	})
}

// A deleted ResourceFlavor that no ClusterQueue names any more stays, with
// its finalizer, while an admitted workload holds quota in it (an event
// says so), and goes once that workload finishes.
func TestFlavorDeletionWaitsForTheWorkloadsUsingIt(t *testing.T) {
	startManager(t)
	ns, cq, fl := singleQueue(t, "4")
	create(t, newWorkload(ns, "running", "lq", 1, "1", 0))
	waitAdmitted(t, ns, "running", cq)

	// The ClusterQueue moves to another flavor; the running workload keeps
	// its reservation in the old one.
	next := scoped(ns, "next")
	create(t, flavor(next, nil))
	update(t, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}, func(q *kueue.ClusterQueue) {
		q.Spec.ResourceGroups[0].Flavors[0].Name = kueue.ResourceFlavorReference(next)
	})
	ctx := context.Background()
	if err := env.Client.Delete(ctx, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "an event says the flavor stays for the workload", func() error {
		var rf kueue.ResourceFlavor
		if err := env.Client.Get(ctx, objectKey("", fl), &rf); err != nil || !slices.Contains(rf.Finalizers, kueue.ResourceInUseFinalizerName) {
			t.Fatalf("the flavor a running workload uses must stay, with its finalizer: %v %v", err, rf.Finalizers)
		}
		var seen []string
		for _, e := range events(t, "", fl) {
			if e.Reason == "InUse" && strings.Contains(e.Message, ns+"/running") {
				return nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Errorf("events seen: %v", seen)
	})

	finish(t, ns, "running")
	eventually(t, 45*time.Second, "the flavor is gone once its workload finished", func() error {
		if err := env.Client.Get(ctx, objectKey("", fl), &kueue.ResourceFlavor{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("ResourceFlavor still there (%v)", err)
		}
		return nil
	})
}

// Issue 53, item 9: a ClusterQueue of a cohort deleted while a workload
// holds quota in it, its finalizer then removed by force, and the manager
// restarted. The workload still runs, so its usage must still count in the
// cohort: the other queue of the cohort must not admit into the capacity
// it holds, and does once it finishes.
func TestForceDeletedClusterQueueStillCountsInItsCohortAfterARestart(t *testing.T) {
	first := startManager(t)
	ns := namespace(t)
	ctx := context.Background()
	cohort, a, b, fl := scoped(ns, "co"), scoped(ns, "cq-a"), scoped(ns, "cq-b"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(a, cohort, fl, "4"), clusterQueue(b, cohort, fl, "4"),
		localQueue(ns, "lq-a", a), localQueue(ns, "lq-b", b))
	create(t, newWorkload(ns, "running", "lq-a", 1, "6", 0)) // 4 own, 2 borrowed
	waitAdmitted(t, ns, "running", a)

	if err := env.Client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: a}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the workload records its ClusterQueue's cohort", func() error {
		if got := getWorkload(t, ns, "running").Annotations[state.CohortAnnotation]; got != cohort {
			return fmt.Errorf("%s = %q, want %q", state.CohortAnnotation, got, cohort)
		}
		return nil
	})
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	var obj kueue.ClusterQueue
	if err := env.Client.Get(ctx, objectKey("", a), &obj); err != nil {
		t.Fatal(err)
	}
	obj.Finalizers = nil // removed by force
	if err := env.Client.Update(ctx, &obj); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the ClusterQueue gone", func() error {
		if err := env.Client.Get(ctx, objectKey("", a), &kueue.ClusterQueue{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})

	startManager(t)
	// The cohort has cq-b's 4; the running workload uses 6 of it.
	create(t, newWorkload(ns, "next", "lq-b", 1, "2", 0))
	stayPending(t, ns, "next")
	finish(t, ns, "running")
	waitAdmitted(t, ns, "next", b)
}
