package metrics

import (
	"time"
)

// LocalQueue identifies a LocalQueue in metric labels (name, namespace).
// The zero value means "no LocalQueue series": pass it when LocalQueue
// metrics are disabled or the queue is not selected for them.
type LocalQueue struct {
	Namespace string
	Name      string
}

// enabled reports whether LocalQueue series should be recorded.
func (q LocalQueue) enabled() bool { return q.Name != "" }

// key identifies the LocalQueue in internal maps.
func (q LocalQueue) key() string { return q.Namespace + "/" + q.Name }

// Workload says where a workload's events are counted.
type Workload struct {
	// ClusterQueue is the ClusterQueue that admitted (or reserves quota
	// for) the workload.
	ClusterQueue string
	// LocalQueue is the workload's LocalQueue; zero skips LocalQueue series.
	LocalQueue LocalQueue
	// PriorityClass is the workload's priority class name ("" if none).
	PriorityClass string
	// Cohorts lists the cohorts whose subtree counters count the
	// workload's admission (the ClusterQueue's ancestors). Only Admitted
	// reads it.
	Cohorts []string
}

// Eviction describes one eviction of an admitted workload.
type Eviction struct {
	// Reason is the eviction reason (Preempted, PodsReadyTimeout,
	// AdmissionCheck, ClusterQueueStopped, LocalQueueStopped, NodeFailures,
	// Deactivated, ...).
	Reason string
	// UnderlyingCause refines Reason ("" when Reason is the root cause).
	UnderlyingCause string
	// FirstForWorkload is true when this is the workload's first eviction
	// with this reason and cause (its status.schedulingStats.evictions
	// count for the pair just became 1); it drives
	// kueue_evicted_workloads_once_total.
	FirstForWorkload bool
	// PodsWereReady is true when the workload's pods were ready at the
	// eviction; PodsReadyFor is then the time since they became ready.
	PodsWereReady bool
	PodsReadyFor  time.Duration
}

// QuotaReserved records that a workload got a quota reservation after
// waiting wait since its creation or last requeue.
func QuotaReserved(wl Workload, wait time.Duration) {
	record(func(c *collectors, role string) {
		c.quotaReserved.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Inc()
		c.quotaReservedWait.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Observe(wait.Seconds())
		if q := wl.LocalQueue; q.enabled() {
			c.lqQuotaReserved.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Inc()
			c.lqQuotaReservedWait.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Observe(wait.Seconds())
		}
	})
}

// Admitted records that a workload was admitted after waiting wait since
// its creation or last requeue. It also counts the admission in the
// subtree counter of every cohort in wl.Cohorts.
func Admitted(wl Workload, wait time.Duration) {
	record(func(c *collectors, role string) {
		c.admitted.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Inc()
		c.admissionWait.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Observe(wait.Seconds())
		if q := wl.LocalQueue; q.enabled() {
			c.lqAdmitted.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Inc()
			c.lqAdmissionWait.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Observe(wait.Seconds())
		}
		for _, cohort := range wl.Cohorts {
			c.cohortSubtreeAdmitted.WithLabelValues(cohort, wl.PriorityClass, role).Inc()
		}
	})
}

// AdmissionChecksPassed records that a workload's admission checks let it
// in, wait after its quota reservation. Call it only for workloads that
// had admission checks.
func AdmissionChecksPassed(wl Workload, wait time.Duration) {
	record(func(c *collectors, role string) {
		c.checksWait.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Observe(wait.Seconds())
		if q := wl.LocalQueue; q.enabled() {
			c.lqChecksWait.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Observe(wait.Seconds())
		}
	})
}

// PodsReady records that a workload's pods became ready (waitForPodsReady),
// sinceQueued after its creation or last requeue and sinceAdmitted after
// its admission.
func PodsReady(wl Workload, sinceQueued, sinceAdmitted time.Duration) {
	record(func(c *collectors, role string) {
		c.readyWait.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Observe(sinceQueued.Seconds())
		c.admittedUntilReady.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Observe(sinceAdmitted.Seconds())
		if q := wl.LocalQueue; q.enabled() {
			c.lqReadyWait.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Observe(sinceQueued.Seconds())
			c.lqAdmittedUntilReady.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Observe(sinceAdmitted.Seconds())
		}
	})
}

// Finished records that a workload finished after spending executionTime
// admitted in total (over all its admissions). A negative executionTime
// (the workload never ran) moves only the counters.
func Finished(wl Workload, executionTime time.Duration) {
	record(func(c *collectors, role string) {
		c.finishedTotal.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Inc()
		if executionTime >= 0 {
			c.executionTime.WithLabelValues(wl.ClusterQueue, wl.PriorityClass, role).Observe(executionTime.Seconds())
		}
		q := wl.LocalQueue
		if !q.enabled() {
			return
		}
		c.lqFinishedTotal.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Inc()
		if executionTime >= 0 {
			c.lqExecutionTime.WithLabelValues(q.Name, q.Namespace, wl.PriorityClass, role).Observe(executionTime.Seconds())
		}
	})
}

// Evicted records the eviction of a workload admitted in wl.ClusterQueue:
// the eviction counters, the unique-eviction counter when
// ev.FirstForWorkload, and the pods-ready-to-eviction time when the pods
// were ready.
func Evicted(wl Workload, ev Eviction) {
	record(func(c *collectors, role string) {
		cq, pc := wl.ClusterQueue, wl.PriorityClass
		c.evicted.WithLabelValues(cq, ev.Reason, ev.UnderlyingCause, pc, role).Inc()
		if ev.FirstForWorkload {
			c.evictedOnce.WithLabelValues(cq, ev.Reason, ev.UnderlyingCause, pc, role).Inc()
		}
		if ev.PodsWereReady {
			c.podsReadyToEvicted.WithLabelValues(cq, ev.Reason, ev.UnderlyingCause, role).Observe(ev.PodsReadyFor.Seconds())
		}
		if q := wl.LocalQueue; q.enabled() {
			c.lqEvicted.WithLabelValues(q.Name, q.Namespace, ev.Reason, ev.UnderlyingCause, pc, role).Inc()
		}
	})
}

// EvictionCompleted records that an evicted workload of cq released its
// quota latency after it was marked Evicted for reason.
func EvictionCompleted(cq, reason string, latency time.Duration) {
	record(func(c *collectors, role string) {
		c.evictionLatency.WithLabelValues(cq, reason, role).Observe(latency.Seconds())
	})
}

// Preempted records that a workload was preempted on behalf of a workload
// of preemptingCQ, for reason (InClusterQueue, InCohortReclamation,
// InCohortFairSharing or InCohortReclaimWhileBorrowing).
func Preempted(preemptingCQ, reason string) {
	record(func(c *collectors, role string) {
		c.preempted.WithLabelValues(preemptingCQ, reason, role).Inc()
	})
}

// WorkloadSliceReplaced records that a workload slice of cq was replaced by
// a newer slice. Like Kueue, the counter is kept but not exported.
func WorkloadSliceReplaced(cq string) {
	record(func(c *collectors, role string) {
		c.replacedSlices.WithLabelValues(cq, role).Inc()
	})
}
