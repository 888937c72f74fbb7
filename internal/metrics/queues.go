package metrics

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the status label of kueue_pending_workloads,
// kueue_pending_scheduling_hashes and kueue_local_queue_pending_workloads.
const (
	PendingActive       = "active"
	PendingInadmissible = "inadmissible"
)

// Values of the status label of kueue_cluster_queue_status. Kueue's help
// text says "terminated", but the value it exports is "terminating".
const (
	CQStatusPending     = "pending"
	CQStatusActive      = "active"
	CQStatusTerminating = "terminating"
)

var cqStatuses = [...]string{CQStatusPending, CQStatusActive, CQStatusTerminating}

// Values of the active label of kueue_local_queue_status (the status of
// the LocalQueue's Active condition).
var lqStatuses = [...]string{"True", "False", "Unknown"}

// Unadmitted is a reason that holds workloads back from a quota
// reservation, as reported by kueue_unadmitted_workloads.
type Unadmitted struct {
	Reason          string
	UnderlyingCause string
}

// ReportPendingWorkloads sets the pending workloads of cq: active ones in
// the queue and inadmissible ones parked until the cluster changes.
func ReportPendingWorkloads(cq string, active, inadmissible int) {
	record(func(c *collectors, role string) {
		c.pending.WithLabelValues(cq, PendingActive, role).Set(float64(active))
		c.pending.WithLabelValues(cq, PendingInadmissible, role).Set(float64(inadmissible))
	})
}

// ReportPendingSchedulingHashes sets the number of distinct
// scheduling-equivalence hashes among the active and inadmissible pending
// workloads of cq.
func ReportPendingSchedulingHashes(cq string, active, inadmissible int) {
	record(func(c *collectors, role string) {
		c.pendingHashes.WithLabelValues(cq, PendingActive, role).Set(float64(active))
		c.pendingHashes.WithLabelValues(cq, PendingInadmissible, role).Set(float64(inadmissible))
	})
}

// ReportUnadmittedWorkloads replaces the unadmitted workload counts of cq:
// one series per entry of counts; reasons reported before and missing now
// are deleted.
func ReportUnadmittedWorkloads(cq string, counts map[Unadmitted]int) {
	record(func(c *collectors, role string) {
		keys := make([]Unadmitted, 0, len(counts))
		for k, n := range counts {
			keys = append(keys, k)
			c.unadmitted.WithLabelValues(cq, k.Reason, k.UnderlyingCause, role).Set(float64(n))
		}
		for _, k := range c.unadmittedSeen.replace(cq, keys) {
			c.unadmitted.DeleteLabelValues(cq, k.Reason, k.UnderlyingCause, role)
		}
	})
}

// ReportReservingActiveWorkloads sets how many workloads hold a quota
// reservation in cq.
func ReportReservingActiveWorkloads(cq string, n int) {
	record(func(c *collectors, role string) {
		c.reservingActive.WithLabelValues(cq, role).Set(float64(n))
	})
}

// ReportAdmittedActiveWorkloads sets how many workloads are admitted in cq
// and not finished.
func ReportAdmittedActiveWorkloads(cq string, n int) {
	record(func(c *collectors, role string) {
		c.admittedActive.WithLabelValues(cq, role).Set(float64(n))
	})
}

// ReportFinishedWorkloads sets how many finished workloads of cq still
// exist.
func ReportFinishedWorkloads(cq string, n int) {
	record(func(c *collectors, role string) {
		c.finished.WithLabelValues(cq, role).Set(float64(n))
	})
}

// ReportClusterQueueStatus sets kueue_cluster_queue_status of cq to 1 for
// status (one of the CQStatus* values; "terminated" is read as
// "terminating") and 0 for the other statuses.
func ReportClusterQueueStatus(cq, status string) {
	if status == "terminated" {
		status = CQStatusTerminating
	}
	record(func(c *collectors, role string) {
		for _, s := range cqStatuses {
			c.status.WithLabelValues(cq, s, role).Set(oneIf(s == status))
		}
	})
}

// ReportClusterQueueInfo sets the place of cq in the cohort tree (its
// parent and root cohorts), replacing what was reported before.
func ReportClusterQueueInfo(cq, parentCohort, rootCohort string) {
	record(func(c *collectors, role string) {
		c.info.DeletePartialMatch(prometheus.Labels{lCQ: cq})
		c.info.WithLabelValues(cq, parentCohort, rootCohort, role).Set(1)
	})
}

// ReportClusterQueueResourcePending sets the quantity of resource (in its
// natural unit: cores, bytes, count) requested by the pending workloads of
// cq.
func ReportClusterQueueResourcePending(cq, resource string, quantity float64) {
	record(func(c *collectors, role string) {
		c.resourcePending.WithLabelValues(cq, resource, role).Set(quantity)
	})
}

// ReportClusterQueueQuota sets the nominal quota, borrowing limit and
// lending limit of cq for a flavor and resource (natural units; pass
// math.Inf(1) for an unset limit). cohort is "" outside any cohort.
func ReportClusterQueueQuota(cohort, cq, flavor, resource string, nominal, borrowingLimit, lendingLimit float64) {
	record(func(c *collectors, role string) {
		c.nominalQuota.WithLabelValues(cohort, cq, flavor, resource, role).Set(nominal)
		c.borrowingLimit.WithLabelValues(cohort, cq, flavor, resource, role).Set(borrowingLimit)
		c.lendingLimit.WithLabelValues(cohort, cq, flavor, resource, role).Set(lendingLimit)
	})
}

// ReportClusterQueueUsage sets how much of a flavor and resource the
// workloads of cq reserve (quota reserved) and use (admitted), in natural
// units.
func ReportClusterQueueUsage(cohort, cq, flavor, resource string, reserved, used float64) {
	record(func(c *collectors, role string) {
		c.reservation.WithLabelValues(cohort, cq, flavor, resource, role).Set(reserved)
		c.usage.WithLabelValues(cohort, cq, flavor, resource, role).Set(used)
	})
}

// ReportClusterQueueWeightedShare sets the fair-sharing weighted share of
// cq. An infinite share (+Inf, or math.MaxInt64 as published in status) is
// reported as NaN, as Kueue does.
func ReportClusterQueueWeightedShare(cq, cohort string, share float64) {
	record(func(c *collectors, role string) {
		c.weightedShare.WithLabelValues(cq, cohort, role).Set(shareValue(share))
	})
}

// ReportCohortWeightedShare sets the fair-sharing weighted share of a
// cohort, with infinity reported as NaN.
func ReportCohortWeightedShare(cohort string, share float64) {
	record(func(c *collectors, role string) {
		c.cohortShare.WithLabelValues(cohort, role).Set(shareValue(share))
	})
}

// ReportCohortInfo sets the place of cohort in the cohort tree, replacing
// what was reported before.
func ReportCohortInfo(cohort, parentCohort, rootCohort string) {
	record(func(c *collectors, role string) {
		c.cohortInfo.DeletePartialMatch(prometheus.Labels{lCohort: cohort})
		c.cohortInfo.WithLabelValues(cohort, parentCohort, rootCohort, role).Set(1)
	})
}

// ReportCohortSubtreeQuota sets the nominal quota of a flavor and resource
// summed over the cohort's subtree (natural units).
func ReportCohortSubtreeQuota(cohort, flavor, resource string, quota float64) {
	record(func(c *collectors, role string) {
		c.cohortSubtreeQuota.WithLabelValues(cohort, flavor, resource, role).Set(quota)
	})
}

// ReportCohortSubtreeReservations sets the reservations of a flavor and
// resource summed over the cohort's subtree (natural units).
func ReportCohortSubtreeReservations(cohort, flavor, resource string, reserved float64) {
	record(func(c *collectors, role string) {
		c.cohortSubtreeReservations.WithLabelValues(cohort, flavor, resource, role).Set(reserved)
	})
}

// ReportCohortSubtreeAdmittedActiveWorkloads sets how many admitted,
// unfinished workloads the cohort's subtree holds.
func ReportCohortSubtreeAdmittedActiveWorkloads(cohort string, n int) {
	record(func(c *collectors, role string) {
		c.cohortSubtreeAdmittedActive.WithLabelValues(cohort, role).Set(float64(n))
	})
}

// shareValue turns an infinite share into NaN.
func shareValue(share float64) float64 {
	if math.IsInf(share, 1) || share >= math.MaxInt64 {
		return math.NaN()
	}
	return share
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
