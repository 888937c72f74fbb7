package manager

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Deleting an admitted workload gives its quota back: a pending workload is
// admitted in its place.
func TestDeletingAdmittedWorkloadReleasesQuota(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "2"), localQueue(ns, "lq", cq))
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
