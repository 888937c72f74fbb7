package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/audit"
)

// A new manager takes over from a stopped one: it rebuilds usage from the
// workloads, admits nothing twice, leaves admitted workloads untouched and
// admits the pending ones when quota frees. The auditor finds nothing wrong.
func TestRestartRebuildsState(t *testing.T) {
	first := startManager(t)
	ns, cq, fl := singleQueue(t, "4")
	create(t, newWorkload(ns, "a1", "lq", 2, "1", 0), newWorkload(ns, "a2", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "a1", cq)
	waitAdmitted(t, ns, "a2", cq)
	create(t, newWorkload(ns, "p1", "lq", 1, "1", 0), newWorkload(ns, "p2", "lq", 1, "1", 0))
	waitPending(t, ns, "p1", kueue.WorkloadReasonWaitingForQuota)
	waitPending(t, ns, "p2", kueue.WorkloadReasonWaitingForQuota)
	waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
		if st.PendingWorkloads != 2 || st.ReservingWorkloads != 2 || reservedCPU(st, fl) != "4" {
			return fmt.Errorf("pending %d reserving %d cpu %s", st.PendingWorkloads, st.ReservingWorkloads, reservedCPU(st, fl))
		}
		return nil
	})
	// Let the status reporter and event recorder settle before comparing.
	time.Sleep(time.Second)
	before := map[string]*kueue.Workload{}
	for _, name := range []string{"a1", "a2"} {
		before[name] = getWorkload(t, ns, name)
		if n := countEvents(t, ns, name, "QuotaReserved"); n != 1 {
			t.Errorf("%s has %d QuotaReserved events before the restart, want 1", name, n)
		}
	}
	cqBefore := getClusterQueue(t, cq)
	if err := first.Stop(); err != nil {
		t.Fatalf("stopping the first manager: %v", err)
	}

	startManager(t)
	// Give the new manager cycles to make (wrong) decisions, and time to
	// publish status.
	afterCycles(t, quietCycles, func() error { return nil })
	time.Sleep(time.Second)
	for name, old := range before {
		now := getWorkload(t, ns, name)
		if now.ResourceVersion != old.ResourceVersion {
			t.Errorf("admitted workload %s was written after the restart:\nbefore %+v\nafter  %+v", name, old.Status, now.Status)
		}
		if !equality.Semantic.DeepEqual(now.Status.Admission, old.Status.Admission) {
			t.Errorf("admission of %s changed: %+v -> %+v", name, old.Status.Admission, now.Status.Admission)
		}
		if n := countEvents(t, ns, name, "QuotaReserved"); n != 1 {
			t.Errorf("%s has %d QuotaReserved events after the restart, want 1", name, n)
		}
	}
	stayPending(t, ns, "p1", "p2")
	cqAfter := getClusterQueue(t, cq)
	if !equality.Semantic.DeepEqual(statusFigures(&cqBefore.Status), statusFigures(&cqAfter.Status)) {
		t.Errorf("ClusterQueue status changed over the restart:\nbefore %+v\nafter  %+v", cqBefore.Status, cqAfter.Status)
	}
	checkAudit(t, ns)

	// The new manager goes on: freed quota goes to the pending workloads.
	finish(t, ns, "a1")
	waitAdmitted(t, ns, "p1", cq)
	waitAdmitted(t, ns, "p2", cq)
	waitUsage(t, cq, fl, 3, "4", "0")
	checkAudit(t, ns)
}

// statusFigures is a ClusterQueue status without condition timestamps.
func statusFigures(st *kueue.ClusterQueueStatus) *kueue.ClusterQueueStatus {
	out := st.DeepCopy()
	for i := range out.Conditions {
		out.Conditions[i].LastTransitionTime = metav1.Time{}
	}
	return out
}

func getClusterQueue(t *testing.T, name string) *kueue.ClusterQueue {
	t.Helper()
	var cq kueue.ClusterQueue
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &cq); err != nil {
		t.Fatal(err)
	}
	return &cq
}

// checkAudit runs the invariant auditor over the whole cluster. Violations
// about this test's objects (named after its namespace) fail the test;
// others (left by other tests of the package) are logged.
func checkAudit(t *testing.T, ns string) {
	t.Helper()
	var rep *audit.Report
	// The status reporter publishes within about a second of a change.
	eventually(t, 10*time.Second, "audit of "+ns, func() error {
		var err error
		if rep, err = audit.Run(context.Background(), env.Client); err != nil {
			return err
		}
		var mine []string
		for _, v := range rep.Violations {
			if strings.Contains(v.Object, ns) {
				mine = append(mine, v.String())
			}
		}
		if len(mine) > 0 {
			return fmt.Errorf("violations:\n%s", strings.Join(mine, "\n"))
		}
		return nil
	})
	if !rep.OK() {
		t.Logf("audit of the whole cluster: %s", rep)
	}
}
