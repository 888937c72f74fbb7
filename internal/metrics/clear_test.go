package metrics

import (
	"testing"
	"time"
)

// recordFor records a bit of everything for cq, its LocalQueue lq and its
// cohort.
func recordFor(cq string, lq LocalQueue, cohort string) {
	wl := Workload{ClusterQueue: cq, LocalQueue: lq, PriorityClass: "p", Cohorts: []string{cohort}}
	QuotaReserved(wl, time.Second)
	Admitted(wl, time.Second)
	Evicted(wl, Eviction{Reason: "Preempted", FirstForWorkload: true, PodsWereReady: true})
	Preempted(cq, "InClusterQueue")
	ReportPendingWorkloads(cq, 1, 1)
	ReportUnadmittedWorkloads(cq, map[Unadmitted]int{{Reason: "WaitingForQuota"}: 1})
	ReportClusterQueueStatus(cq, CQStatusActive)
	ReportClusterQueueInfo(cq, cohort, cohort)
	ReportClusterQueueQuota(cohort, cq, "f", "cpu", 1, 1, 1)
	ReportClusterQueueUsage(cohort, cq, "f", "cpu", 1, 1)
	ReportClusterQueueResourcePending(cq, "cpu", 1)
	ReportClusterQueueWeightedShare(cq, cohort, 1)
	ReportLocalQueuePendingWorkloads(lq, 1, 1)
	ReportLocalQueueUnadmittedWorkloads(lq, cq, map[Unadmitted]int{{Reason: "WaitingForQuota"}: 1})
	ReportLocalQueueStatus(lq, "True")
	ReportLocalQueueUsage(lq, "f", "cpu", 1, 1)
	ReportLocalQueueFairSharingUsage(lq, cq, 1)
	ReportCohortInfo(cohort, "", cohort)
	ReportCohortWeightedShare(cohort, 1)
	ReportCohortSubtreeQuota(cohort, "f", "cpu", 1)
	ReportCohortSubtreeReservations(cohort, "f", "cpu", 1)
	ReportCohortSubtreeAdmittedActiveWorkloads(cohort, 1)
}

func TestClearClusterQueue(t *testing.T) {
	reg := newRegistry(t)
	recordFor("cq1", LocalQueue{Namespace: "n", Name: "lq1"}, "co1")
	recordFor("cq2", LocalQueue{Namespace: "n", Name: "lq2"}, "co2")
	before := seriesWith(t, reg, "cluster_queue", "cq2")
	ClearClusterQueue("cq1")
	if n := seriesWith(t, reg, "cluster_queue", "cq1"); n != 0 {
		t.Errorf("%d series with cluster_queue=cq1 left", n)
	}
	if n := seriesWith(t, reg, "preempting_cluster_queue", "cq1"); n != 0 {
		t.Errorf("%d series with preempting_cluster_queue=cq1 left", n)
	}
	if n := seriesWith(t, reg, "cluster_queue", "cq2"); n != before || n == 0 {
		t.Errorf("cq2 has %d series, want %d", n, before)
	}
	if n := seriesWith(t, reg, "preempting_cluster_queue", "cq2"); n != 1 {
		t.Errorf("cq2 preemptions: %d series, want 1", n)
	}
	// A new report after the clear starts from scratch.
	ReportUnadmittedWorkloads("cq1", map[Unadmitted]int{{Reason: "Suspended"}: 1})
	if n := count(t, reg, "kueue_unadmitted_workloads", "cluster_queue", "cq1"); n != 1 {
		t.Errorf("cq1 unadmitted after re-report: %d series, want 1", n)
	}
}

func TestClearClusterQueueResources(t *testing.T) {
	reg := newRegistry(t)
	recordFor("cq", LocalQueue{Namespace: "n", Name: "lq"}, "co")
	ClearClusterQueueResources("cq")
	for _, name := range []string{
		"kueue_cluster_queue_resource_reservation", "kueue_cluster_queue_resource_usage",
		"kueue_cluster_queue_nominal_quota", "kueue_cluster_queue_borrowing_limit",
		"kueue_cluster_queue_lending_limit", "kueue_cluster_queue_resource_pending",
		"kueue_cluster_queue_weighted_share",
	} {
		if n := count(t, reg, name); n != 0 {
			t.Errorf("%s: %d series left", name, n)
		}
	}
	if n := count(t, reg, "kueue_pending_workloads", "cluster_queue", "cq"); n != 2 {
		t.Errorf("pending workloads: %d series, want 2 (untouched)", n)
	}
}

func TestClearLocalQueue(t *testing.T) {
	reg := newRegistry(t)
	lq1, lq2 := LocalQueue{Namespace: "n", Name: "lq1"}, LocalQueue{Namespace: "n", Name: "lq2"}
	recordFor("cq", lq1, "co")
	recordFor("cq", lq2, "co")
	cqSeries := seriesWith(t, reg, "cluster_queue", "cq")
	ClearLocalQueue(lq1)
	if n := seriesWith(t, reg, "name", "lq1"); n != 0 {
		t.Errorf("%d series of lq1 left", n)
	}
	if n := seriesWith(t, reg, "name", "lq2"); n == 0 {
		t.Error("series of lq2 were deleted")
	}
	// Only lq1's two series that carry cluster_queue went away.
	if n := seriesWith(t, reg, "cluster_queue", "cq"); n != cqSeries-2 {
		t.Errorf("cluster_queue=cq series: %d, want %d", n, cqSeries-2)
	}
}

func TestClearCohort(t *testing.T) {
	reg := newRegistry(t)
	recordFor("cq1", LocalQueue{Namespace: "n", Name: "lq1"}, "co1")
	recordFor("cq2", LocalQueue{Namespace: "n", Name: "lq2"}, "co2")
	ClearCohort("co1")
	for _, name := range []string{
		"kueue_cohort_info", "kueue_cohort_weighted_share", "kueue_cohort_subtree_quota",
		"kueue_cohort_subtree_resource_reservations", "kueue_cohort_subtree_admitted_workloads_total",
		"kueue_cohort_subtree_admitted_active_workloads",
	} {
		if n := count(t, reg, name, "cohort", "co1"); n != 0 {
			t.Errorf("%s: %d series of co1 left", name, n)
		}
		if n := count(t, reg, name, "cohort", "co2"); n != 1 {
			t.Errorf("%s: %d series of co2, want 1", name, n)
		}
	}
	// ClusterQueue series naming the cohort stay.
	if n := count(t, reg, "kueue_cluster_queue_nominal_quota", "cohort", "co1"); n != 1 {
		t.Errorf("cq1 quota series: %d, want 1", n)
	}
}

func TestReplicaRole(t *testing.T) {
	reg := newRegistry(t)
	if r := ReplicaRole(); r != RoleStandalone {
		t.Fatalf("default role %q, want standalone", r)
	}
	ReportPendingWorkloads("cq", 3, 1)
	AdmissionAttempt(AdmissionSuccess, time.Millisecond)
	SetReplicaRole(RoleLeader)
	// Gauges move to the new role with their values.
	if v := value(t, reg, "kueue_pending_workloads", "status", "active", "replica_role", "leader"); v != 3 {
		t.Errorf("pending under leader = %v, want 3", v)
	}
	if n := count(t, reg, "kueue_pending_workloads", "replica_role", "standalone"); n != 0 {
		t.Errorf("%d pending series left under standalone", n)
	}
	// Counters keep their series; new events use the new role.
	AdmissionAttempt(AdmissionSuccess, time.Millisecond)
	for _, role := range []string{"standalone", "leader"} {
		if v := value(t, reg, "kueue_admission_attempts_total", "replica_role", role); v != 1 {
			t.Errorf("attempts under %s = %v, want 1", role, v)
		}
	}
	SetReplicaRole(RoleFollower)
	ReportPendingWorkloads("cq", 5, 0)
	if v := value(t, reg, "kueue_pending_workloads", "status", "active", "replica_role", "follower"); v != 5 {
		t.Errorf("pending under follower = %v, want 5", v)
	}
	if n := count(t, reg, "kueue_pending_workloads"); n != 2 {
		t.Errorf("pending: %d series, want 2", n)
	}
	if n := count(t, reg, "kueue_build_info"); n != 1 {
		t.Errorf("build info: %d series, want 1", n)
	}
}

func TestRegistriesAreIndependent(t *testing.T) {
	first := newRegistry(t)
	Preempted("cq", "InClusterQueue")
	second := newRegistry(t)
	Preempted("cq", "InClusterQueue")
	Preempted("cq", "InClusterQueue")
	if v := value(t, first, "kueue_preempted_workloads_total"); v != 1 {
		t.Errorf("first registry: %v, want 1", v)
	}
	if v := value(t, second, "kueue_preempted_workloads_total"); v != 2 {
		t.Errorf("second registry: %v, want 2", v)
	}
}
