package manager

import (
	"fmt"
	"testing"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A ClusterQueue borrows the unused quota of another one in its cohort; the
// status reports the borrowed amount. When the lender needs its quota back
// and cannot reclaim, it waits; once the borrower finishes, the lender gets
// it.
func TestBorrowingInCohort(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cohort, fl := scoped(ns, "co"), scoped(ns, "f")
	lender, borrower := scoped(ns, "lender"), scoped(ns, "borrower")
	create(t, flavor(fl, nil),
		clusterQueue(lender, cohort, fl, "4"), clusterQueue(borrower, cohort, fl, "2"),
		localQueue(ns, "lender", lender), localQueue(ns, "borrower", borrower))

	create(t, newWorkload(ns, "big", "borrower", 5, "1", 0))
	waitAdmitted(t, ns, "big", borrower)
	waitUsage(t, borrower, fl, 1, "5", "3")
	waitUsage(t, lender, fl, 0, "0", "0")

	// The lender's own workload waits: the quota is lent out and the lender
	// may not preempt (reclaimWithinCohort: Never by default).
	create(t, newWorkload(ns, "own", "lender", 2, "1", 0))
	waitPending(t, ns, "own", kueue.WorkloadReasonWaitingForQuota)
	finish(t, ns, "big")
	waitAdmitted(t, ns, "own", lender)
	waitUsage(t, lender, fl, 1, "2", "0")
	waitUsage(t, borrower, fl, 0, "0", "0")
}

// A lendingLimit keeps part of the lender's quota for itself: the borrower
// gets only the lendable part, and the lender can still use the rest.
func TestLendingLimitKeepsQuotaForLender(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cohort, fl := scoped(ns, "co"), scoped(ns, "f")
	lender, borrower := scoped(ns, "lender"), scoped(ns, "borrower")
	create(t, flavor(fl, nil),
		clusterQueue(lender, cohort, fl, "4", limits("", "1")), clusterQueue(borrower, cohort, fl, "2"),
		localQueue(ns, "lender", lender), localQueue(ns, "borrower", borrower))

	// The borrower can have 2 + 1 lendable = 3 cpu, not more.
	create(t, newWorkload(ns, "b1", "borrower", 3, "1", 0))
	waitAdmitted(t, ns, "b1", borrower)
	waitUsage(t, borrower, fl, 1, "3", "1")
	create(t, newWorkload(ns, "b2", "borrower", 1, "1", 0))
	waitPending(t, ns, "b2", kueue.WorkloadReasonWaitingForQuota)

	// The lender still has 3 cpu of its own.
	create(t, newWorkload(ns, "l1", "lender", 3, "1", 0))
	waitAdmitted(t, ns, "l1", lender)
	waitUsage(t, lender, fl, 1, "3", "0")
	stayPending(t, ns, "b2")
}

// A borrowingLimit caps what a ClusterQueue borrows even when the cohort has
// more unused quota.
func TestBorrowingLimitCapsBorrowing(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cohort, fl := scoped(ns, "co"), scoped(ns, "f")
	lender, borrower := scoped(ns, "lender"), scoped(ns, "borrower")
	create(t, flavor(fl, nil),
		clusterQueue(lender, cohort, fl, "4"), clusterQueue(borrower, cohort, fl, "2", limits("1", "")),
		localQueue(ns, "lender", lender), localQueue(ns, "borrower", borrower))

	for _, name := range []string{"w1", "w2", "w3", "w4"} {
		create(t, newWorkload(ns, name, "borrower", 1, "1", 0))
	}
	eventually(t, 45*time.Second, "three of four workloads admitted", func() error {
		if got := admittedIn(t, ns, borrower); len(got) != 3 {
			return fmt.Errorf("admitted %v", got)
		}
		return nil
	})
	waitUsage(t, borrower, fl, 3, "3", "1")
	stayPending(t, ns, pendingOf(t, ns, "w1", "w2", "w3", "w4")...)
	waitUsage(t, lender, fl, 0, "0", "0")
}
