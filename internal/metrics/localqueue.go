package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// lqUnadmitted keys the unadmitted series of a LocalQueue.
type lqUnadmitted struct {
	cq string
	Unadmitted
}

// ReportLocalQueuePendingWorkloads sets the active and inadmissible pending
// workloads of lq. Like every LocalQueue report, it does nothing for the
// zero LocalQueue.
func ReportLocalQueuePendingWorkloads(lq LocalQueue, active, inadmissible int) {
	if !lq.enabled() {
		return
	}
	record(func(c *collectors, role string) {
		c.lqPending.WithLabelValues(lq.Name, lq.Namespace, PendingActive, role).Set(float64(active))
		c.lqPending.WithLabelValues(lq.Name, lq.Namespace, PendingInadmissible, role).Set(float64(inadmissible))
	})
}

// ReportLocalQueueUnadmittedWorkloads replaces the unadmitted workload
// counts of lq, whose ClusterQueue is cq; series reported before and
// missing now (including those of a previous ClusterQueue) are deleted.
func ReportLocalQueueUnadmittedWorkloads(lq LocalQueue, cq string, counts map[Unadmitted]int) {
	if !lq.enabled() {
		return
	}
	record(func(c *collectors, role string) {
		keys := make([]lqUnadmitted, 0, len(counts))
		for k, n := range counts {
			keys = append(keys, lqUnadmitted{cq: cq, Unadmitted: k})
			c.lqUnadmitted.WithLabelValues(lq.Name, lq.Namespace, cq, k.Reason, k.UnderlyingCause, role).Set(float64(n))
		}
		for _, k := range c.lqUnadmittedSeen.replace(lq.key(), keys) {
			c.lqUnadmitted.DeleteLabelValues(lq.Name, lq.Namespace, k.cq, k.Reason, k.UnderlyingCause, role)
		}
	})
}

// ReportLocalQueueReservingActiveWorkloads sets how many workloads of lq
// hold a quota reservation.
func ReportLocalQueueReservingActiveWorkloads(lq LocalQueue, n int) {
	setLQ(lq, n, func(c *collectors) *prometheus.GaugeVec { return c.lqReservingActive })
}

// ReportLocalQueueAdmittedActiveWorkloads sets how many workloads of lq are
// admitted and not finished.
func ReportLocalQueueAdmittedActiveWorkloads(lq LocalQueue, n int) {
	setLQ(lq, n, func(c *collectors) *prometheus.GaugeVec { return c.lqAdmittedActive })
}

// ReportLocalQueueFinishedWorkloads sets how many finished workloads of lq
// still exist.
func ReportLocalQueueFinishedWorkloads(lq LocalQueue, n int) {
	setLQ(lq, n, func(c *collectors) *prometheus.GaugeVec { return c.lqFinished })
}

// ReportLocalQueueStatus sets kueue_local_queue_status of lq to 1 for
// active (the status of its Active condition: "True", "False" or
// "Unknown") and 0 for the other values.
func ReportLocalQueueStatus(lq LocalQueue, active string) {
	if !lq.enabled() {
		return
	}
	record(func(c *collectors, role string) {
		for _, s := range lqStatuses {
			c.lqStatus.WithLabelValues(lq.Name, lq.Namespace, s, role).Set(oneIf(s == active))
		}
	})
}

// ReportLocalQueueUsage sets how much of a flavor and resource the
// workloads of lq reserve and use (admitted), in natural units.
func ReportLocalQueueUsage(lq LocalQueue, flavor, resource string, reserved, used float64) {
	if !lq.enabled() {
		return
	}
	record(func(c *collectors, role string) {
		c.lqReservation.WithLabelValues(lq.Name, lq.Namespace, flavor, resource, role).Set(reserved)
		c.lqUsage.WithLabelValues(lq.Name, lq.Namespace, flavor, resource, role).Set(used)
	})
}

// ReportLocalQueueFairSharingUsage sets the admission fair sharing usage
// of lq in cq (its decayed usage divided by its weight).
func ReportLocalQueueFairSharingUsage(lq LocalQueue, cq string, usage float64) {
	if !lq.enabled() {
		return
	}
	record(func(c *collectors, role string) {
		c.lqFairSharingUsage.WithLabelValues(lq.Name, lq.Namespace, cq, role).Set(usage)
	})
}

// setLQ sets the plain count gauge picked by pick for lq.
func setLQ(lq LocalQueue, n int, pick func(c *collectors) *prometheus.GaugeVec) {
	if !lq.enabled() {
		return
	}
	record(func(c *collectors, role string) {
		pick(c).WithLabelValues(lq.Name, lq.Namespace, role).Set(float64(n))
	})
}
