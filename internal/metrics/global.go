package metrics

import (
	"strconv"
	"time"
)

// Values of the result label of kueue_admission_attempts_total and
// kueue_admission_attempt_duration_seconds.
const (
	AdmissionSuccess      = "success"
	AdmissionInadmissible = "inadmissible"
)

// Values of the result label of kueue_preemption_target_recomputations_total.
const (
	RecomputeNewTargets  = "new_targets"
	RecomputeDeferredFit = "deferred_fit"
	RecomputeSkipped     = "skipped"
)

// Scheduling gate names, the values of the name label of
// kueue_pod_scheduling_gate_removal_seconds.
const (
	GateAdmission  = "kueue.x-k8s.io/admission"
	GateTopology   = "kueue.x-k8s.io/topology"
	GateElasticJob = "kueue.x-k8s.io/elastic-job"
)

// AdmissionAttempt records one scheduling cycle that took duration;
// result is AdmissionSuccess when it admitted at least one workload,
// AdmissionInadmissible otherwise.
func AdmissionAttempt(result string, duration time.Duration) {
	record(func(c *collectors, role string) {
		c.admissionAttempts.WithLabelValues(result, role).Inc()
		c.admissionAttemptDuration.WithLabelValues(result, role).Observe(duration.Seconds())
	})
}

// ReportPreemptionSkips sets how many workloads of cq found preemption
// targets in the last cycle but were skipped because another ClusterQueue
// needed the same resources.
func ReportPreemptionSkips(cq string, n int) {
	record(func(c *collectors, role string) {
		c.preemptionSkips.WithLabelValues(cq, role).Set(float64(n))
	})
}

// PreemptionTargetsRecomputed records a recomputation of preemption
// targets for a workload of cq after its targets overlapped with another
// preemptor's; result is one of the Recompute* values.
func PreemptionTargetsRecomputed(cq, result string) {
	record(func(c *collectors, role string) {
		c.targetRecomputations.WithLabelValues(cq, result, role).Inc()
	})
}

// SchedulingGateRemoved records that gate (one of the Gate* values) was
// removed from the pods of a workload of cq, latency after its admission;
// isGroup says whether the pods form a pod group.
func SchedulingGateRemoved(gate, cq string, isGroup bool, latency time.Duration) {
	record(func(c *collectors, role string) {
		c.gateRemoval.WithLabelValues(gate, cq, strconv.FormatBool(isGroup), role).Observe(latency.Seconds())
	})
}

// WorkloadCreated records that the Workload of a job of kind jobKind was
// created latency after the job. Kueue only counts jobs at generation 1;
// the caller applies that rule.
func WorkloadCreated(jobKind string, latency time.Duration) {
	record(func(c *collectors, role string) {
		c.creationLatency.WithLabelValues(jobKind, role).Observe(latency.Seconds())
	})
}

// MultiKueueDispatched records that a workload of cq was copied to the
// worker cluster.
func MultiKueueDispatched(cq, cluster string) {
	record(func(c *collectors, role string) {
		c.mkDispatched.WithLabelValues(cq, cluster, role).Inc()
	})
}

// MultiKueueAdmitted records that a workload of cq was admitted on the
// worker cluster (each re-admission counts again).
func MultiKueueAdmitted(cq, cluster string) {
	record(func(c *collectors, role string) {
		c.mkAdmitted.WithLabelValues(cq, cluster, role).Inc()
	})
}
