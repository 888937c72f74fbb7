package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Label names shared by many families.
const (
	lCQ       = "cluster_queue"
	lPriority = "priority_class"
	lReason   = "reason"
	lCause    = "underlying_cause"
	lStatus   = "status"
	lCohort   = "cohort"
	lFlavor   = "flavor"
	lResource = "resource"
	lName     = "name"
	lNS       = "namespace"
	lParent   = "parent_cohort"
	lRoot     = "root_cohort"
)

// collectors is one complete set of Kuota's metric vectors. Register
// builds a fresh set for every registry, so tests never share values.
type collectors struct {
	families []*family
	// unadmittedSeen and lqUnadmittedSeen remember which unadmitted series
	// were reported last, so a new report can delete the vanished ones.
	unadmittedSeen   *replacer[Unadmitted]
	lqUnadmittedSeen *replacer[lqUnadmitted]

	globalCollectors
	cqEventCollectors
	cqStateCollectors
	lqCollectors
	cohortCollectors
}

type globalCollectors struct {
	buildInfo                *prometheus.GaugeVec
	admissionAttempts        *prometheus.CounterVec
	admissionAttemptDuration *prometheus.HistogramVec
	preemptionSkips          *prometheus.GaugeVec
	targetRecomputations     *prometheus.CounterVec
	gateRemoval              *prometheus.HistogramVec
	creationLatency          *prometheus.HistogramVec
	mkDispatched             *prometheus.CounterVec
	mkAdmitted               *prometheus.CounterVec
}

type cqEventCollectors struct {
	quotaReserved      *prometheus.CounterVec
	quotaReservedWait  *prometheus.HistogramVec
	admitted           *prometheus.CounterVec
	admissionWait      *prometheus.HistogramVec
	checksWait         *prometheus.HistogramVec
	readyWait          *prometheus.HistogramVec
	admittedUntilReady *prometheus.HistogramVec
	finishedTotal      *prometheus.CounterVec
	executionTime      *prometheus.HistogramVec
	evicted            *prometheus.CounterVec
	evictedOnce        *prometheus.CounterVec
	podsReadyToEvicted *prometheus.HistogramVec
	evictionLatency    *prometheus.HistogramVec
	preempted          *prometheus.CounterVec
	replacedSlices     *prometheus.CounterVec
}

type cqStateCollectors struct {
	pending         *prometheus.GaugeVec
	pendingHashes   *prometheus.GaugeVec
	unadmitted      *prometheus.GaugeVec
	reservingActive *prometheus.GaugeVec
	admittedActive  *prometheus.GaugeVec
	finished        *prometheus.GaugeVec
	status          *prometheus.GaugeVec
	resourcePending *prometheus.GaugeVec
	info            *prometheus.GaugeVec
	reservation     *prometheus.GaugeVec
	usage           *prometheus.GaugeVec
	nominalQuota    *prometheus.GaugeVec
	borrowingLimit  *prometheus.GaugeVec
	lendingLimit    *prometheus.GaugeVec
	weightedShare   *prometheus.GaugeVec
}

type lqCollectors struct {
	lqPending            *prometheus.GaugeVec
	lqUnadmitted         *prometheus.GaugeVec
	lqQuotaReserved      *prometheus.CounterVec
	lqQuotaReservedWait  *prometheus.HistogramVec
	lqAdmitted           *prometheus.CounterVec
	lqAdmissionWait      *prometheus.HistogramVec
	lqChecksWait         *prometheus.HistogramVec
	lqReadyWait          *prometheus.HistogramVec
	lqAdmittedUntilReady *prometheus.HistogramVec
	lqReservingActive    *prometheus.GaugeVec
	lqAdmittedActive     *prometheus.GaugeVec
	lqFinished           *prometheus.GaugeVec
	lqFinishedTotal      *prometheus.CounterVec
	lqExecutionTime      *prometheus.HistogramVec
	lqEvicted            *prometheus.CounterVec
	lqStatus             *prometheus.GaugeVec
	lqReservation        *prometheus.GaugeVec
	lqUsage              *prometheus.GaugeVec
	lqFairSharingUsage   *prometheus.GaugeVec
}

type cohortCollectors struct {
	cohortInfo                  *prometheus.GaugeVec
	cohortShare                 *prometheus.GaugeVec
	cohortSubtreeQuota          *prometheus.GaugeVec
	cohortSubtreeReservations   *prometheus.GaugeVec
	cohortSubtreeAdmitted       *prometheus.CounterVec
	cohortSubtreeAdmittedActive *prometheus.GaugeVec
}

// newCollectors defines every family of SPEC section 6.
func newCollectors() *collectors {
	b := &builder{}
	c := &collectors{
		unadmittedSeen:   newReplacer[Unadmitted](),
		lqUnadmittedSeen: newReplacer[lqUnadmitted](),
	}
	c.globalCollectors = newGlobal(b)
	c.cqEventCollectors = newCQEvents(b)
	c.cqStateCollectors = newCQState(b)
	c.lqCollectors = newLQEvents(b)
	newLQState(b, &c.lqCollectors)
	c.cohortCollectors = newCohort(b)
	c.families = b.families
	return c
}

func newGlobal(b *builder) globalCollectors {
	var g globalCollectors
	g.buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "kueue_build_info",
		Help: "Always 1; the labels describe the running build (version, commit, date, Go toolchain, platform).",
	}, []string{"git_version", "git_commit", "build_date", "go_version", "compiler", "platform"})
	b.add(&family{name: "kueue_build_info", kind: kindGauge, scope: scopeGlobal,
		labels: []string{"git_version", "git_commit", "build_date", "go_version", "compiler", "platform"},
		vec:    g.buildInfo.MetricVec, col: g.buildInfo})
	g.admissionAttempts = b.counter("kueue_admission_attempts_total",
		"Scheduling cycles run. result is 'success' when the cycle admitted at least one workload, 'inadmissible' otherwise.",
		scopeGlobal, "result")
	g.admissionAttemptDuration = b.histogram("kueue_admission_attempt_duration_seconds",
		"How long one scheduling cycle took, by result ('success' or 'inadmissible').",
		nil, scopeGlobal, "result")
	g.preemptionSkips = b.gauge("kueue_admission_cycle_preemption_skips",
		"Workloads of the ClusterQueue that found preemption targets in the last cycle but were skipped because another ClusterQueue needed the same resources in that cycle.",
		scopeClusterQueue, lCQ)
	g.targetRecomputations = b.counter("kueue_preemption_target_recomputations_total",
		"Preemption target recomputations after targets overlapped within a cycle, by outcome ('new_targets', 'deferred_fit' or 'skipped').",
		scopeClusterQueue, lCQ, "result")
	g.gateRemoval = b.histogram("kueue_pod_scheduling_gate_removal_seconds",
		"Time from admission until Kueue removed a scheduling gate from the pods, by gate name, ClusterQueue and whether the pods form a group.",
		nil, scopeClusterQueue, lName, lCQ, "is_group")
	g.creationLatency = b.histogram("kueue_workload_creation_latency_seconds",
		"Time from the creation of a job until the creation of its Workload, by job kind (only objects at generation 1 are counted).",
		creationBuckets(), scopeGlobal, "job_kind")
	g.mkDispatched = b.counter("multikueue_workloads_dispatched_total",
		"Workloads copied to a MultiKueue worker cluster, by ClusterQueue and worker.",
		scopeClusterQueue, lCQ, "cluster")
	g.mkAdmitted = b.counter("multikueue_workloads_admitted_total",
		"Workloads admitted on a MultiKueue worker cluster, by ClusterQueue and worker; a re-admission counts again.",
		scopeClusterQueue, lCQ, "cluster")
	return g
}

func newCQEvents(b *builder) cqEventCollectors {
	var e cqEventCollectors
	e.quotaReserved = b.counter("kueue_quota_reserved_workloads_total",
		"Workloads that got a quota reservation in the ClusterQueue.", scopeClusterQueue, lCQ, lPriority)
	e.quotaReservedWait = b.histogram("kueue_quota_reserved_wait_time_seconds",
		"Time from a workload's creation or last requeue until it got a quota reservation in the ClusterQueue.",
		waitBuckets(14), scopeClusterQueue, lCQ, lPriority)
	e.admitted = b.counter("kueue_admitted_workloads_total",
		"Workloads admitted by the ClusterQueue.", scopeClusterQueue, lCQ, lPriority)
	e.admissionWait = b.histogram("kueue_admission_wait_time_seconds",
		"Time from a workload's creation or last requeue until its admission by the ClusterQueue.",
		waitBuckets(16), scopeClusterQueue, lCQ, lPriority)
	e.checksWait = b.histogram("kueue_admission_checks_wait_time_seconds",
		"Time from a workload's quota reservation until its admission (waiting for admission checks).",
		waitBuckets(14), scopeClusterQueue, lCQ, lPriority)
	e.readyWait = b.histogram("kueue_ready_wait_time_seconds",
		"Time from a workload's creation or last requeue until its pods were ready (waitForPodsReady only).",
		waitBuckets(14), scopeClusterQueue, lCQ, lPriority)
	e.admittedUntilReady = b.histogram("kueue_admitted_until_ready_wait_time_seconds",
		"Time from a workload's admission until its pods were ready (waitForPodsReady only).",
		waitBuckets(14), scopeClusterQueue, lCQ, lPriority)
	e.finishedTotal = b.counter("kueue_finished_workloads_total",
		"Workloads of the ClusterQueue that finished.", scopeClusterQueue, lCQ, lPriority)
	e.executionTime = b.histogram("kueue_execution_time_seconds",
		"Total time finished workloads spent admitted, summed over every admission (evictions and readmissions included).",
		waitBuckets(14), scopeClusterQueue, lCQ, lPriority)
	e.evicted = b.counter("kueue_evicted_workloads_total",
		"Evictions of workloads admitted in the ClusterQueue, by eviction reason and underlying cause.",
		scopeClusterQueue, lCQ, lReason, lCause, lPriority)
	e.evictedOnce = b.counter("kueue_evicted_workloads_once_total",
		"Workloads evicted from the ClusterQueue, counting each workload once per eviction reason and underlying cause.",
		scopeClusterQueue, lCQ, lReason, lCause, lPriority)
	e.podsReadyToEvicted = b.histogram("kueue_pods_ready_to_evicted_time_seconds",
		"Time from a workload's pods becoming ready until its eviction, by eviction reason and underlying cause.",
		waitBuckets(14), scopeClusterQueue, lCQ, lReason, lCause)
	e.evictionLatency = b.histogram("kueue_workload_eviction_latency_seconds",
		"Time from a workload's eviction until its quota was released, by eviction reason.",
		waitBuckets(14), scopeClusterQueue, lCQ, lReason)
	e.preempted = b.counter("kueue_preempted_workloads_total",
		"Workloads preempted on behalf of the ClusterQueue, by preemption reason.",
		scopeClusterQueue, "preempting_cluster_queue", lReason)
	e.replacedSlices = b.counter("kueue_replaced_workload_slices_total",
		"Workload slices of the ClusterQueue replaced by a newer slice.", scopeClusterQueue, lCQ)
	b.families[len(b.families)-1].unexported = true
	return e
}

func newCQState(b *builder) cqStateCollectors {
	var s cqStateCollectors
	s.pending = b.gauge("kueue_pending_workloads",
		"Pending workloads of the ClusterQueue: 'active' ones wait in the queue, 'inadmissible' ones wait for the cluster to change.",
		scopeClusterQueue, lCQ, lStatus)
	s.pendingHashes = b.gauge("kueue_pending_scheduling_hashes",
		"Distinct scheduling-equivalence hashes among the pending workloads of the ClusterQueue, by status.",
		scopeClusterQueue, lCQ, lStatus)
	s.unadmitted = b.gauge("kueue_unadmitted_workloads",
		"Workloads of the ClusterQueue without a quota reservation, by the reason that holds them back.",
		scopeClusterQueue, lCQ, lReason, lCause)
	s.reservingActive = b.gauge("kueue_reserving_active_workloads",
		"Workloads holding a quota reservation in the ClusterQueue.", scopeClusterQueue, lCQ)
	s.admittedActive = b.gauge("kueue_admitted_active_workloads",
		"Workloads admitted in the ClusterQueue and not finished.", scopeClusterQueue, lCQ)
	s.finished = b.gauge("kueue_finished_workloads",
		"Finished workloads of the ClusterQueue that still exist.", scopeClusterQueue, lCQ)
	s.status = b.gauge("kueue_cluster_queue_status",
		"1 for the current status of the ClusterQueue ('pending', 'active' or 'terminating'), 0 for the others.",
		scopeClusterQueue, lCQ, lStatus)
	s.resourcePending = b.gauge("kueue_cluster_queue_resource_pending",
		"Resources requested by the pending workloads of the ClusterQueue, before any flavor is chosen.",
		scopeClusterQueue, lCQ, lResource)
	s.info = b.gauge("kueue_cluster_queue_info",
		"Always 1; places the ClusterQueue in the cohort tree (its parent and root cohorts).",
		scopeClusterQueue, lCQ, lParent, lRoot)
	newCQResources(b, &s)
	return s
}

func newCQResources(b *builder, s *cqStateCollectors) {
	fr := []string{lCohort, lCQ, lFlavor, lResource}
	s.reservation = b.gauge("kueue_cluster_queue_resource_reservation",
		"Quantity of a resource flavor reserved by the workloads of the ClusterQueue.", scopeClusterQueue, fr...)
	s.usage = b.gauge("kueue_cluster_queue_resource_usage",
		"Quantity of a resource flavor used by the admitted workloads of the ClusterQueue.", scopeClusterQueue, fr...)
	s.nominalQuota = b.gauge("kueue_cluster_queue_nominal_quota",
		"Nominal quota of the ClusterQueue for a resource flavor.", scopeClusterQueue, fr...)
	s.borrowingLimit = b.gauge("kueue_cluster_queue_borrowing_limit",
		"Borrowing limit of the ClusterQueue for a resource flavor (+Inf when unlimited).", scopeClusterQueue, fr...)
	s.lendingLimit = b.gauge("kueue_cluster_queue_lending_limit",
		"Lending limit of the ClusterQueue for a resource flavor (+Inf when unlimited).", scopeClusterQueue, fr...)
	s.weightedShare = b.gauge("kueue_cluster_queue_weighted_share",
		"Fair-sharing weighted share of the ClusterQueue: the largest ratio of its usage above nominal quota to what its cohort can lend, divided by its weight; 0 when within nominal quota, NaN when its weight is 0 and it borrows.",
		scopeClusterQueue, lCQ, lCohort)
}

func newCohort(b *builder) cohortCollectors {
	var c cohortCollectors
	c.cohortInfo = b.gauge("kueue_cohort_info",
		"Always 1; places the Cohort in the cohort tree (its parent and root cohorts).",
		scopeCohort, lCohort, lParent, lRoot)
	c.cohortShare = b.gauge("kueue_cohort_weighted_share",
		"Fair-sharing weighted share of the Cohort: the largest ratio of its usage above its subtree quota to what its parent can lend, divided by its weight; NaN when its weight is 0 and it borrows.",
		scopeCohort, lCohort)
	c.cohortSubtreeQuota = b.gauge("kueue_cohort_subtree_quota",
		"Nominal quota of a resource flavor summed over the Cohort's subtree.", scopeCohort, lCohort, lFlavor, lResource)
	c.cohortSubtreeReservations = b.gauge("kueue_cohort_subtree_resource_reservations",
		"Reservations of a resource flavor summed over the Cohort's subtree.", scopeCohort, lCohort, lFlavor, lResource)
	c.cohortSubtreeAdmitted = b.counter("kueue_cohort_subtree_admitted_workloads_total",
		"Workloads admitted anywhere in the Cohort's subtree.", scopeCohort, lCohort, lPriority)
	c.cohortSubtreeAdmittedActive = b.gauge("kueue_cohort_subtree_admitted_active_workloads",
		"Admitted, unfinished workloads anywhere in the Cohort's subtree.", scopeCohort, lCohort)
	return c
}
