package hierarchy

import (
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

var cpu = FlavorResource{Flavor: "default", Resource: "cpu"}

func q(nominal int64) Quotas { return Quotas{cpu: NominalOnly(nominal * 1000)} }

func ql(nominal, borrowing, lending int64) Quotas {
	quota := NominalOnly(nominal * 1000)
	if borrowing >= 0 {
		quota.BorrowingLimit = borrowing * 1000
	}
	if lending >= 0 {
		quota.LendingLimit = lending * 1000
	}
	return Quotas{cpu: quota}
}

func use(n int64) resources.FlavorResourceQuantities {
	return resources.FlavorResourceQuantities{cpu: n * 1000}
}

func checkAvail(t *testing.T, tree *Tree, cq string, want int64) {
	t.Helper()
	if got := tree.ClusterQueue(refCQ(cq)).Available(cpu); got != want*1000 {
		t.Errorf("Available(%s) = %d, want %d", cq, got, want*1000)
	}
}

func TestClusterQueueWithoutCohortNeverBorrows(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "", q(10))
	a := tree.ClusterQueue("a")
	tree.AddUsage(a, use(4))
	checkAvail(t, tree, "a", 6)
	if got := a.PotentialAvailable(cpu); got != 10000 {
		t.Errorf("potential = %d, want 10000", got)
	}
	if lvl, ok := a.BorrowingLevel(cpu, 7000); ok {
		t.Errorf("7 more cpu should not fit, got level %d", lvl)
	}
}

func TestBorrowingBetweenSiblings(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "team", q(10))
	tree.SetClusterQueue("b", "team", q(10))
	a, b := tree.ClusterQueue("a"), tree.ClusterQueue("b")
	tree.AddUsage(a, use(15))
	checkAvail(t, tree, "a", 5)
	checkAvail(t, tree, "b", 5)
	if lvl, ok := a.BorrowingLevel(cpu, 1000); !ok || lvl != 1 {
		t.Errorf("a borrowing more: level %d ok %v, want 1 true", lvl, ok)
	}
	if lvl, ok := b.BorrowingLevel(cpu, 5000); !ok || lvl != 0 {
		t.Errorf("b within nominal: level %d ok %v, want 0 true", lvl, ok)
	}
	tree.RemoveUsage(a, use(15))
	checkAvail(t, tree, "b", 20)
	if got := tree.Cohort("team").Usage(cpu); got != 0 {
		t.Errorf("cohort usage after release = %d, want 0", got)
	}
}

func TestLendingLimitKeepsQuotaForOwner(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "team", q(10))
	tree.SetClusterQueue("b", "team", ql(10, -1, 4))
	checkAvail(t, tree, "a", 14)
	checkAvail(t, tree, "b", 20)
	tree.AddUsage(tree.ClusterQueue("a"), use(14))
	checkAvail(t, tree, "a", 0)
	// b still has the 6 it does not lend.
	checkAvail(t, tree, "b", 6)
}

func TestBorrowingLimitCapsBorrowing(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "team", ql(10, 2, -1))
	tree.SetClusterQueue("b", "team", q(10))
	checkAvail(t, tree, "a", 12)
	tree.AddUsage(tree.ClusterQueue("a"), use(11))
	checkAvail(t, tree, "a", 1)
	checkAvail(t, tree, "b", 9)
}

// A three-level tree: root (nominal 6) <- org (lends at most 3) <- team CQs.
func TestThreeLevelsWithCohortQuotaAndLimits(t *testing.T) {
	tree := New()
	tree.SetCohort("root", "", q(6))
	tree.SetCohort("org", "root", ql(0, 2, 3))
	tree.SetClusterQueue("a", "org", q(4))
	tree.SetClusterQueue("b", "org", q(4))
	tree.SetClusterQueue("c", "root", q(2))
	// a: own 4 + b's 4 within org + org may borrow 2 from root.
	checkAvail(t, tree, "a", 10)
	// c: own 2 + root's 6 + what org lends (at most 3 of its 8).
	checkAvail(t, tree, "c", 11)
	tree.AddUsage(tree.ClusterQueue("a"), use(9))
	// a lends all its quota, so all 9 count at org; org keeps 5 of its 8
	// for itself, so 4 come from root's pool.
	if got := tree.Cohort("org").Usage(cpu); got != 9000 {
		t.Errorf("org usage = %d, want 9000", got)
	}
	if got := tree.Cohort("root").Usage(cpu); got != 4000 {
		t.Errorf("root usage = %d, want 4000", got)
	}
	// b: org can still borrow 2+3-4 = 1 from root.
	checkAvail(t, tree, "b", 1)
	// c: root's pool is 6 + 2 (c) + 3 (lent by org) = 11, 4 used.
	checkAvail(t, tree, "c", 7)
}

func TestCycleMakesTreeInactive(t *testing.T) {
	tree := New()
	tree.SetCohort("x", "y", q(5))
	tree.SetCohort("y", "x", q(5))
	tree.SetClusterQueue("a", "x", q(10))
	a := tree.ClusterQueue("a")
	if a.Active() {
		t.Fatal("a ClusterQueue under a cycle must be inactive")
	}
	checkAvail(t, tree, "a", 0)
	tree.SetCohort("y", "", q(5))
	if !a.Active() {
		t.Fatal("breaking the cycle must reactivate the ClusterQueue")
	}
	checkAvail(t, tree, "a", 20)
}

func TestImplicitCohortDisappearsWhenUnused(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "ghost", q(1))
	if tree.Cohort("ghost") == nil {
		t.Fatal("a referenced Cohort must exist implicitly")
	}
	tree.SetClusterQueue("a", "", q(1))
	if tree.Cohort("ghost") != nil {
		t.Fatal("an implicit Cohort nobody references must go away")
	}
}

func TestQuotaChangeKeepsUsage(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "team", q(10))
	tree.SetClusterQueue("b", "team", q(10))
	tree.AddUsage(tree.ClusterQueue("a"), use(12))
	tree.SetClusterQueue("b", "team", q(5))
	checkAvail(t, tree, "a", 3)
	if got := tree.Cohort("team").Usage(cpu); got != 12000 {
		t.Errorf("cohort usage = %d, want 12000", got)
	}
}

func refCQ(s string) kueue.ClusterQueueReference { return kueue.ClusterQueueReference(s) }

// Freeze and Clone share nodes: a clone copies only the cohort tree it
// writes, and neither the live tree nor a clone changes a frozen view.
func TestSharingCopiesOnlyWhatIsWritten(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "left", q(10))
	tree.SetClusterQueue("b", "left", q(10))
	tree.SetClusterQueue("c", "right", q(10))
	tree.AddUsage(tree.ClusterQueue("a"), use(4))
	view := tree.Freeze()
	work := view.Clone()
	work.AddUsage(work.ClusterQueue("a"), use(3))
	if work.queue("c") != view.queue("c") || work.cohort("right") != view.cohort("right") {
		t.Error("a clone copied a cohort tree it did not touch")
	}
	if work.queue("b") == view.queue("b") {
		t.Error("a clone shares a node of a cohort tree it wrote")
	}
	tree.AddUsage(tree.ClusterQueue("b"), use(5))
	checkAvail(t, view, "a", 16)
	checkAvail(t, work, "a", 13)
	checkAvail(t, tree, "a", 11)
	future := work.Clone()
	future.RemoveUsage(future.ClusterQueue("a"), use(7))
	work.AddUsage(work.ClusterQueue("b"), use(1))
	checkAvail(t, future, "b", 20)
	checkAvail(t, work, "b", 12)
	checkAvail(t, view, "b", 16)
	defer func() {
		if recover() == nil {
			t.Error("a frozen tree accepted a write")
		}
	}()
	view.AddUsage(view.ClusterQueue("a"), use(1))
}
