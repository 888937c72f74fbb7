package metrics

// lqLabels returns the LocalQueue identity labels followed by extra.
func lqLabels(extra ...string) []string {
	return append([]string{lName, lNS}, extra...)
}

func newLQEvents(b *builder) lqCollectors {
	var q lqCollectors
	q.lqQuotaReserved = b.counter("kueue_local_queue_quota_reserved_workloads_total",
		"Workloads of the LocalQueue that got a quota reservation.", scopeLocalQueue, lqLabels(lPriority)...)
	q.lqQuotaReservedWait = b.histogram("kueue_local_queue_quota_reserved_wait_time_seconds",
		"Time from a workload's creation or last requeue until it got a quota reservation, per LocalQueue.",
		waitBuckets(14), scopeLocalQueue, lqLabels(lPriority)...)
	q.lqAdmitted = b.counter("kueue_local_queue_admitted_workloads_total",
		"Workloads of the LocalQueue that were admitted.", scopeLocalQueue, lqLabels(lPriority)...)
	q.lqAdmissionWait = b.histogram("kueue_local_queue_admission_wait_time_seconds",
		"Time from a workload's creation or last requeue until its admission, per LocalQueue.",
		waitBuckets(14), scopeLocalQueue, lqLabels(lPriority)...)
	q.lqChecksWait = b.histogram("kueue_local_queue_admission_checks_wait_time_seconds",
		"Time from a workload's quota reservation until its admission (waiting for admission checks), per LocalQueue.",
		waitBuckets(14), scopeLocalQueue, lqLabels(lPriority)...)
	q.lqReadyWait = b.histogram("kueue_local_queue_ready_wait_time_seconds",
		"Time from a workload's creation or last requeue until its pods were ready, per LocalQueue (waitForPodsReady only).",
		waitBuckets(14), scopeLocalQueue, lqLabels(lPriority)...)
	q.lqAdmittedUntilReady = b.histogram("kueue_local_queue_admitted_until_ready_wait_time_seconds",
		"Time from a workload's admission until its pods were ready, per LocalQueue (waitForPodsReady only).",
		waitBuckets(14), scopeLocalQueue, lqLabels(lPriority)...)
	q.lqFinishedTotal = b.counter("kueue_local_queue_finished_workloads_total",
		"Workloads of the LocalQueue that finished.", scopeLocalQueue, lqLabels(lPriority)...)
	q.lqExecutionTime = b.histogram("kueue_local_queue_execution_time_seconds",
		"Total time finished workloads of the LocalQueue spent admitted, summed over every admission.",
		waitBuckets(14), scopeLocalQueue, lqLabels(lPriority)...)
	q.lqEvicted = b.counter("kueue_local_queue_evicted_workloads_total",
		"Evictions of workloads of the LocalQueue, by eviction reason and underlying cause.",
		scopeLocalQueue, lqLabels(lReason, lCause, lPriority)...)
	return q
}

func newLQState(b *builder, q *lqCollectors) {
	q.lqPending = b.gauge("kueue_local_queue_pending_workloads",
		"Pending workloads of the LocalQueue: 'active' ones wait in the queue, 'inadmissible' ones wait for the cluster to change.",
		scopeLocalQueue, lqLabels(lStatus)...)
	q.lqUnadmitted = b.gauge("kueue_local_queue_unadmitted_workloads",
		"Workloads of the LocalQueue without a quota reservation, by ClusterQueue and the reason that holds them back.",
		scopeLocalQueue, lqLabels(lCQ, lReason, lCause)...)
	q.lqReservingActive = b.gauge("kueue_local_queue_reserving_active_workloads",
		"Workloads of the LocalQueue holding a quota reservation.", scopeLocalQueue, lqLabels()...)
	q.lqAdmittedActive = b.gauge("kueue_local_queue_admitted_active_workloads",
		"Workloads of the LocalQueue admitted and not finished.", scopeLocalQueue, lqLabels()...)
	q.lqFinished = b.gauge("kueue_local_queue_finished_workloads",
		"Finished workloads of the LocalQueue that still exist.", scopeLocalQueue, lqLabels()...)
	q.lqStatus = b.gauge("kueue_local_queue_status",
		"1 for the status of the LocalQueue's Active condition ('True', 'False' or 'Unknown'), 0 for the others.",
		scopeLocalQueue, lqLabels("active")...)
	q.lqReservation = b.gauge("kueue_local_queue_resource_reservation",
		"Quantity of a resource flavor reserved by the workloads of the LocalQueue.",
		scopeLocalQueue, lqLabels(lFlavor, lResource)...)
	q.lqUsage = b.gauge("kueue_local_queue_resource_usage",
		"Quantity of a resource flavor used by the admitted workloads of the LocalQueue.",
		scopeLocalQueue, lqLabels(lFlavor, lResource)...)
	q.lqFairSharingUsage = b.gauge("kueue_local_queue_admission_fair_sharing_usage",
		"Admission fair sharing usage of the LocalQueue (its decayed usage divided by its weight).",
		scopeLocalQueue, lqLabels(lCQ)...)
}
