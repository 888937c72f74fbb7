package audit

import "testing"

// TestPebibyteCohortOverItsQuota: issue 53 as the auditor sees it. Two
// ClusterQueues of 5Pi of memory make a cohort of 10Pi; workloads holding
// 5Pi and 6Pi there are 11Pi on 10Pi, a violation (counted in milli-bytes
// the cohort's quota used to saturate to "unlimited" and hide it).
func TestPebibyteCohortOverItsQuota(t *testing.T) {
	mem := func(nominal string) quota { return quota{flavor: "f", res: "memory", nominal: nominal} }
	r := check(objects(newFlavor("f"), newCohort("storage", ""),
		newClusterQueue("a", "storage", mem("5Pi")), newClusterQueue("b", "storage", mem("5Pi")),
		newWorkload("w1", 1, reserving("a", "f", 1, usage{"memory": "5Pi"})),
		newWorkload("w2", 1, reserving("b", "f", 1, usage{"memory": "6Pi"}))))
	wantViolations(t, r, KindQuotaExceeded,
		"Cohort storage: root cohort: its members draw 11Pi of f/memory, above the subtree quota 10Pi")
}

// TestUsageThatCannotBeCounted: recorded usage beyond what Kuota counts
// is reported, naming the field, and still counts against the quota.
func TestUsageThatCannotBeCounted(t *testing.T) {
	r := check(objects(newFlavor("f"), newClusterQueue("a", "", quota{flavor: "f", res: "memory", nominal: "4Ei"}),
		newWorkload("w1", 1, reserving("a", "f", 1, usage{"memory": "5Ei"}))))
	wantViolations(t, r, KindInvalidObject, "Workload ns/w1: status.admission.podSetAssignments[0].resourceUsage: "+
		"5Ei of memory is more than Kuota can count (at most 4Ei)")
	if len(ofKind(r, KindNominalQuotaExceeded)) != 1 {
		t.Errorf("the uncountable usage should exceed the nominal quota:\n%s", r)
	}
}
