package v1beta2

// Workload condition types.
const (
	// WorkloadQuotaReserved is True while the workload holds quota in a ClusterQueue.
	WorkloadQuotaReserved = "QuotaReserved"
	// WorkloadAdmitted is True when quota is reserved and every admission check is Ready.
	WorkloadAdmitted = "Admitted"
	// WorkloadFinished is True once the workload's job has ended.
	WorkloadFinished = "Finished"
	// WorkloadPodsReady is True when enough pods of every PodSet are ready.
	WorkloadPodsReady = "PodsReady"
	// WorkloadEvicted is True when the workload was asked to give up its quota.
	WorkloadEvicted = "Evicted"
	// WorkloadPreempted is True when the eviction was a preemption.
	WorkloadPreempted = "Preempted"
	// WorkloadRequeued tells whether an evicted workload is back in its queue.
	WorkloadRequeued = "Requeued"
	// WorkloadDeactivationTarget asks for the workload to be deactivated.
	WorkloadDeactivationTarget = "DeactivationTarget"
	// WorkloadWaitingForReplacementPods is set on pod groups missing pods.
	WorkloadWaitingForReplacementPods = "WaitingForReplacementPods"
	// WorkloadBlockedOnPreemptionGates is set while closed gates block preemption.
	WorkloadBlockedOnPreemptionGates = "BlockedOnPreemptionGates"
)

// Reasons of the QuotaReserved and Admitted conditions.
const (
	WorkloadReasonQuotaReserved                = "QuotaReserved"
	WorkloadReasonPendingEvaluation            = "PendingEvaluation"
	WorkloadReasonWaitingForQuota              = "WaitingForQuota"
	WorkloadReasonNoMatchingFlavor             = "NoMatchingFlavor"
	WorkloadReasonExceedsMaxQuota              = "ExceedsMaxQuota"
	WorkloadReasonTopologyPlacementFailed      = "TopologyPlacementFailed"
	WorkloadReasonWaitingForPreemptedWorkloads = "WaitingForPreemptedWorkloads"
	WorkloadReasonMisconfigured                = "Misconfigured"
	WorkloadReasonSuspended                    = "Suspended"
	WorkloadReasonWaitingForPodsReady          = "WaitingForPodsReady"
	WorkloadReasonAdmissionGated               = "AdmissionGated"
	WorkloadReasonOnHold                       = "OnHold"
	WorkloadReasonPending                      = "Pending"
	WorkloadReasonInadmissible                 = "Inadmissible"
	WorkloadReasonAdmitted                     = "Admitted"
	WorkloadReasonNoReservation                = "NoReservation"
	WorkloadReasonUnsatisfiedAdmissionChecks   = "UnsatisfiedAdmissionChecks"
	WorkloadReasonPendingDelayedTopology       = "PendingDelayedTopologyRequests"
)

// Reasons of the Evicted condition (also the `reason` label of eviction metrics).
const (
	WorkloadEvictedByPreemption          = "Preempted"
	WorkloadEvictedByPodsReadyTimeout    = "PodsReadyTimeout"
	WorkloadEvictedByAdmissionCheck      = "AdmissionCheck"
	WorkloadEvictedByClusterQueueStopped = "ClusterQueueStopped"
	WorkloadEvictedByLocalQueueStopped   = "LocalQueueStopped"
	WorkloadEvictedByNodeFailures        = "NodeFailures"
	WorkloadEvictedByDeactivation        = "Deactivated"
	WorkloadEvictedOnManagerCluster      = "EvictedOnManagerCluster"
	WorkloadEvictedByFlavorMigration     = "FlavorMigration"
)

// Underlying causes of evictions and deactivations.
const (
	WorkloadWaitForStart                 EvictionUnderlyingCause = "WaitForStart"
	WorkloadWaitForRecovery              EvictionUnderlyingCause = "WaitForRecovery"
	WorkloadRequeuingLimitExceeded       EvictionUnderlyingCause = "RequeuingLimitExceeded"
	WorkloadMaximumExecutionTimeExceeded EvictionUnderlyingCause = "MaximumExecutionTimeExceeded"
	WorkloadAdmissionCheckCause          EvictionUnderlyingCause = "AdmissionCheck"
)

// Reasons of the Preempted condition.
const (
	InClusterQueueReason                = "InClusterQueue"
	InCohortReclamationReason           = "InCohortReclamation"
	InCohortFairSharingReason           = "InCohortFairSharing"
	InCohortReclaimWhileBorrowingReason = "InCohortReclaimWhileBorrowing"
)

// Reasons of the Requeued, PodsReady and Finished conditions.
const (
	WorkloadBackoffFinished       = "BackoffFinished"
	WorkloadReactivated           = "Reactivated"
	WorkloadClusterQueueRestarted = "ClusterQueueRestarted"
	WorkloadLocalQueueRestarted   = "LocalQueueRestarted"
	WorkloadStarted               = "Started"
	WorkloadRecovered             = "Recovered"
	WorkloadFinishedSucceeded     = "Succeeded"
	WorkloadFinishedFailed        = "Failed"
	WorkloadFinishedOutOfSync     = "OutOfSync"
	WorkloadFinishedOwnerNotFound = "OwnerNotFound"
	WorkloadSliceReplaced         = "WorkloadSliceReplaced"
	WorkloadPreemptionGated       = "PreemptionGated"
)

// AdmissionGatedByAnnotation, on a job or its Workload, lists
// comma-separated gates (for instance example.com/a,example.com/b) that
// hold back the quota reservation until each is removed; gates are set at
// creation and may later only be removed.
const AdmissionGatedByAnnotation = "kueue.x-k8s.io/admission-gated-by"

// Elastic jobs (workload slices).
const (
	// ElasticJobAnnotation, "true" on a job (and copied to its
	// Workloads), lets the job change its pod counts while it runs: a
	// lower count is written into its Workload, a higher one is admitted
	// as a new Workload slice that replaces the running one.
	ElasticJobAnnotation = "kueue.x-k8s.io/elastic-job"
	// ElasticJobSchedulingGate holds the pods of an elastic job until the
	// slice that counts them is admitted.
	ElasticJobSchedulingGate = "kueue.x-k8s.io/elastic-job"
	// WorkloadSliceReplacementForAnnotation, on a Workload slice, is the
	// "<namespace>/<name>" of the admitted slice it replaces.
	WorkloadSliceReplacementForAnnotation = "kueue.x-k8s.io/workload-slice-replacement-for"
	// WorkloadSliceNameAnnotation, on a Workload slice, is the name of the
	// first Workload of the chain of slices.
	WorkloadSliceNameAnnotation = "kueue.x-k8s.io/workload-slice-name"
)
