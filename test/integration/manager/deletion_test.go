package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
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
