package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadStatus is the admission state of a Workload.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.clusterName) || !has(self.clusterName) || oldSelf.clusterName == self.clusterName",message="clusterName cannot change once set"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterName) || !has(self.nominatedClusterNames) || size(self.nominatedClusterNames) == 0",message="clusterName and nominatedClusterNames cannot both be set"
type WorkloadStatus struct {
	// conditions hold the latest observations: QuotaReserved, Admitted,
	// Finished, Evicted, Preempted, Requeued, PodsReady and others.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// admission records the ClusterQueue and flavors of the quota
	// reservation. Its content does not change while it is set.
	// +optional
	Admission *Admission `json:"admission,omitempty"`

	// requeueState tracks retries after evictions.
	// +optional
	RequeueState *RequeueState `json:"requeueState,omitempty"`

	// reclaimablePods counts, per PodSet, pods that finished and whose quota
	// can be given back while the workload runs.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ReclaimablePods []ReclaimablePod `json:"reclaimablePods,omitempty"`

	// admissionChecks holds the state of each admission check.
	// +listType=map
	// +listMapKey=name
	// +patchStrategy=merge
	// +patchMergeKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	AdmissionChecks []AdmissionCheckState `json:"admissionChecks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// resourceRequests holds the effective requests of each PodSet while the
	// workload is not admitted.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ResourceRequests []PodSetRequest `json:"resourceRequests,omitempty"`

	// accumulatedPastExecutionTimeSeconds is the time spent admitted in
	// earlier admissions.
	// +optional
	AccumulatedPastExecutionTimeSeconds *int32 `json:"accumulatedPastExecutionTimeSeconds,omitempty"`

	// schedulingStats counts evictions by reason.
	// +optional
	SchedulingStats *SchedulingStats `json:"schedulingStats,omitempty"`

	// nominatedClusterNames are the worker clusters the workload is offered
	// to by MultiKueue.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=256
	// +optional
	NominatedClusterNames []string `json:"nominatedClusterNames,omitempty"`

	// clusterName is the worker cluster the workload was admitted in.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`

	// unhealthyNodes lists nodes whose pods need new placement.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	UnhealthyNodes []UnhealthyNode `json:"unhealthyNodes,omitempty"`

	// preemptionGates holds the position of each preemption gate.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PreemptionGates []PreemptionGateState `json:"preemptionGates,omitempty"`
}

// Admission is a quota reservation in a ClusterQueue.
type Admission struct {
	// clusterQueue holds the reservation.
	// +optional
	ClusterQueue ClusterQueueReference `json:"clusterQueue,omitempty"`

	// podSetAssignments gives the flavors and counts per PodSet.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments,omitempty"`
}

// DelayedTopologyRequestState tells whether topology assignment waits for
// provisioning.
// +kubebuilder:validation:Enum=Pending;Ready
// +kubebuilder:validation:MaxLength=7
type DelayedTopologyRequestState string

const (
	// DelayedTopologyRequestStatePending waits for provisioning.
	DelayedTopologyRequestStatePending DelayedTopologyRequestState = "Pending"
	// DelayedTopologyRequestStateReady has the assignment computed.
	DelayedTopologyRequestStateReady DelayedTopologyRequestState = "Ready"
)

// PodSetAssignment is the admission of one PodSet.
type PodSetAssignment struct {
	// name of the PodSet.
	// +kubebuilder:default=main
	// +optional
	Name PodSetReference `json:"name,omitempty"`

	// flavors maps each requested resource to its assigned flavor.
	// +optional
	Flavors map[corev1.ResourceName]ResourceFlavorReference `json:"flavors,omitempty"`

	// resourceUsage is the total quota reserved for the PodSet.
	// +optional
	ResourceUsage corev1.ResourceList `json:"resourceUsage,omitempty"`

	// count is the number of pods admitted, below the PodSet's count under
	// partial admission.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count *int32 `json:"count,omitempty"`

	// topologyAssignment places the pods in topology domains.
	// +optional
	TopologyAssignment *TopologyAssignment `json:"topologyAssignment,omitempty"`

	// delayedTopologyRequest says the topology assignment waits for
	// provisioning.
	// +optional
	DelayedTopologyRequest *DelayedTopologyRequestState `json:"delayedTopologyRequest,omitempty"`
}

// TopologyAssignment is a compact list of topology domains and pod counts.
// +kubebuilder:validation:XValidation:rule="self.slices.all(s, size(s.valuesPerLevel) == size(self.levels))",message="every slice needs one valuesPerLevel entry per level"
type TopologyAssignment struct {
	// levels are the node labels of the domains, widest first.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=317
	Levels []string `json:"levels"`

	// slices group domains with a common encoding.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Slices []TopologyAssignmentSlice `json:"slices"`
}

// TopologyAssignmentSlice describes domainCount domains.
// +kubebuilder:validation:XValidation:rule="!has(self.podCounts.individual) || size(self.podCounts.individual) == self.domainCount",message="podCounts.individual needs domainCount entries"
// +kubebuilder:validation:XValidation:rule="self.valuesPerLevel.all(v, !has(v.individual) || size(v.individual.roots) == self.domainCount)",message="valuesPerLevel individual roots need domainCount entries"
type TopologyAssignmentSlice struct {
	// domainCount is the number of domains in the slice.
	// +required
	// +kubebuilder:validation:Minimum=1
	DomainCount int32 `json:"domainCount"`

	// valuesPerLevel gives the label values of the domains, one entry per level.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	ValuesPerLevel []TopologyAssignmentSliceLevelValues `json:"valuesPerLevel"`

	// podCounts gives the number of pods per domain.
	// +required
	PodCounts TopologyAssignmentSlicePodCounts `json:"podCounts"`
}

// TopologyAssignmentSliceLevelValues holds the values of one level, either
// one value for all domains or one per domain.
// +kubebuilder:validation:XValidation:rule="has(self.universal) != has(self.individual)",message="set exactly one of universal and individual"
type TopologyAssignmentSliceLevelValues struct {
	// universal is the value shared by every domain.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Universal *string `json:"universal,omitempty"`

	// individual lists one value per domain.
	// +optional
	Individual *TopologyAssignmentSliceLevelIndividualValues `json:"individual,omitempty"`
}

// TopologyAssignmentSliceLevelIndividualValues lists per-domain values as
// prefix + root + suffix.
type TopologyAssignmentSliceLevelIndividualValues struct {
	// prefix is shared by every value.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Prefix *string `json:"prefix,omitempty"`

	// suffix is shared by every value.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Suffix *string `json:"suffix,omitempty"`

	// roots are the varying parts, one per domain.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100000
	// +kubebuilder:validation:items:MaxLength=63
	Roots []string `json:"roots"`
}

// TopologyAssignmentSlicePodCounts gives pod counts, either one count for
// every domain or one per domain.
// +kubebuilder:validation:XValidation:rule="has(self.universal) != has(self.individual)",message="set exactly one of universal and individual"
type TopologyAssignmentSlicePodCounts struct {
	// universal is the pod count of every domain.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Universal *int32 `json:"universal,omitempty"`

	// individual lists one pod count per domain.
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100000
	// +kubebuilder:validation:items:Minimum=1
	// +optional
	Individual []int32 `json:"individual,omitempty"`
}

// RequeueState tracks retries after evictions.
type RequeueState struct {
	// count is the number of times the workload was requeued.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count *int32 `json:"count,omitempty"`

	// requeueAt is the earliest time the workload may be retried.
	// +optional
	RequeueAt *metav1.Time `json:"requeueAt,omitempty"`
}

// ReclaimablePod counts finished pods of one PodSet.
type ReclaimablePod struct {
	// name of the PodSet.
	// +required
	Name PodSetReference `json:"name"`

	// count of pods whose quota can be released.
	// +required
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

// CheckState is the state of one admission check for one workload.
// +kubebuilder:validation:Enum=Pending;Ready;Retry;Rejected
type CheckState string

const (
	// CheckStatePending means the check has not decided yet.
	CheckStatePending CheckState = "Pending"
	// CheckStateReady means the check passed.
	CheckStateReady CheckState = "Ready"
	// CheckStateRetry means the reservation must be released and retried.
	CheckStateRetry CheckState = "Retry"
	// CheckStateRejected means the workload can never pass; it is deactivated.
	CheckStateRejected CheckState = "Rejected"
)

// AdmissionCheckState is the state of one admission check for a workload.
type AdmissionCheckState struct {
	// name of the AdmissionCheck.
	// +required
	Name AdmissionCheckReference `json:"name"`

	// state of the check.
	// +required
	State CheckState `json:"state"`

	// lastTransitionTime is when state last changed.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`

	// message explains the state.
	// +required
	// +kubebuilder:validation:MaxLength=32768
	Message string `json:"message"`

	// requeueAfterSeconds, with state Retry, delays the retry.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RequeueAfterSeconds *int32 `json:"requeueAfterSeconds,omitempty"`

	// retryCount counts transitions to Retry.
	// +kubebuilder:validation:Minimum=0
	// +optional
	RetryCount *int32 `json:"retryCount,omitempty"`

	// podSetUpdates are added to the pods when the workload starts.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=18
	// +optional
	PodSetUpdates []PodSetUpdate `json:"podSetUpdates,omitempty"`
}

// PodSetUpdate lists additions to the pods of one PodSet.
type PodSetUpdate struct {
	// name of the PodSet.
	// +required
	Name PodSetReference `json:"name"`

	// labels to add.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations to add.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// nodeSelector entries to add.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations to add.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Tolerations Tolerations `json:"tolerations,omitempty"`
}

// PodSetRequest holds the effective requests of one PodSet.
type PodSetRequest struct {
	// name of the PodSet.
	// +required
	Name PodSetReference `json:"name"`

	// resources are the total requests of the PodSet's pods.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
}

// EvictionUnderlyingCause refines an eviction reason.
// +kubebuilder:validation:MaxLength=316
type EvictionUnderlyingCause string

// SchedulingStats counts scheduling events of a workload.
type SchedulingStats struct {
	// evictions counts evictions by reason and underlying cause.
	// +listType=map
	// +listMapKey=reason
	// +listMapKey=underlyingCause
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Evictions []WorkloadSchedulingStatsEviction `json:"evictions,omitempty"`
}

// WorkloadSchedulingStatsEviction counts evictions of one kind.
type WorkloadSchedulingStatsEviction struct {
	// reason of the eviction, as in the Evicted condition.
	// +required
	// +kubebuilder:validation:MaxLength=316
	Reason string `json:"reason"`

	// underlyingCause refines the reason; empty when there is none.
	// +required
	UnderlyingCause EvictionUnderlyingCause `json:"underlyingCause"`

	// count of evictions.
	// +required
	// +kubebuilder:validation:Minimum=0
	Count int32 `json:"count"`
}

// UnhealthyNode names a node whose pods need new placement.
type UnhealthyNode struct {
	// name of the node.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
}

// PreemptionGatePosition is the position of a preemption gate.
// +kubebuilder:validation:Enum=Closed;Open
type PreemptionGatePosition string

const (
	// PreemptionGateClosed blocks preemption.
	PreemptionGateClosed PreemptionGatePosition = "Closed"
	// PreemptionGateOpen allows preemption.
	PreemptionGateOpen PreemptionGatePosition = "Open"
)

// PreemptionGateState is the position of one preemption gate.
type PreemptionGateState struct {
	// name of the gate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// position of the gate.
	// +required
	Position PreemptionGatePosition `json:"position"`

	// lastTransitionTime is when position last changed.
	// +required
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
}
