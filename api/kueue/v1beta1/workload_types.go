package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// WorkloadSpec is v1beta2's WorkloadSpec with v1beta1's priority class:
// a name and a source instead of v1beta2's priorityClassRef.
// +kubebuilder:validation:XValidation:rule="!has(self.priorityClassName) || has(self.priority)",message="priority must be set when priorityClassName is set"
type WorkloadSpec struct {
	// podSets are the groups of identical pods that make up the workload.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=18
	PodSets []v1beta2.PodSet `json:"podSets,omitempty"`

	// queueName is the LocalQueue the workload is submitted to.
	// +optional
	QueueName v1beta2.LocalQueueName `json:"queueName,omitempty"`

	// priorityClassName is the class the priority was taken from.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// priority orders the workload in its queue and decides preemption.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// priorityClassSource says which kind of class priorityClassName names:
	// kueue.x-k8s.io/workloadpriorityclass or scheduling.k8s.io/priorityclass.
	// +kubebuilder:default=""
	// +kubebuilder:validation:Enum=kueue.x-k8s.io/workloadpriorityclass;scheduling.k8s.io/priorityclass;""
	// +optional
	PriorityClassSource string `json:"priorityClassSource,omitempty"`

	// active set to false keeps the workload from being admitted.
	// +kubebuilder:default=true
	// +optional
	Active *bool `json:"active,omitempty"`

	// maximumExecutionTimeSeconds, when set, deactivates the workload once
	// it has been admitted for this long in total.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`

	// preemptionGates is v1beta2's field, kept so that a v1beta1 update does
	// not drop it.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PreemptionGates []v1beta2.PreemptionGate `json:"preemptionGates,omitempty"`
}

// The sources of priorityClassSource.
const (
	WorkloadPriorityClassSource = "kueue.x-k8s.io/workloadpriorityclass"
	PodPriorityClassSource      = "scheduling.k8s.io/priorityclass"
)

// WorkloadStatus is v1beta2's WorkloadStatus with v1beta1's admission
// (topology domains listed one by one) and its spelling of
// accumulatedPastExexcutionTimeSeconds.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.clusterName) || !has(self.clusterName) || oldSelf.clusterName == self.clusterName",message="clusterName cannot change once set"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterName) || !has(self.nominatedClusterNames) || size(self.nominatedClusterNames) == 0",message="clusterName and nominatedClusterNames cannot both be set"
type WorkloadStatus struct {
	// conditions hold the latest observations.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// admission records the ClusterQueue and flavors of the reservation.
	// +optional
	Admission *Admission `json:"admission,omitempty"`

	// requeueState tracks retries after evictions.
	// +optional
	RequeueState *v1beta2.RequeueState `json:"requeueState,omitempty"`

	// reclaimablePods counts, per PodSet, pods whose quota can be given back.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ReclaimablePods []v1beta2.ReclaimablePod `json:"reclaimablePods,omitempty"`

	// admissionChecks holds the state of each admission check.
	// +listType=map
	// +listMapKey=name
	// +patchStrategy=merge
	// +patchMergeKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	AdmissionChecks []v1beta2.AdmissionCheckState `json:"admissionChecks,omitempty" patchStrategy:"merge" patchMergeKey:"name"`

	// resourceRequests holds the effective requests of each PodSet.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +optional
	ResourceRequests []v1beta2.PodSetRequest `json:"resourceRequests,omitempty"`

	// accumulatedPastExexcutionTimeSeconds is the time spent admitted in
	// earlier admissions (v1beta1's spelling).
	// +optional
	AccumulatedPastExexcutionTimeSeconds *int32 `json:"accumulatedPastExexcutionTimeSeconds,omitempty"`

	// schedulingStats counts evictions by reason.
	// +optional
	SchedulingStats *v1beta2.SchedulingStats `json:"schedulingStats,omitempty"`

	// nominatedClusterNames are the worker clusters the workload is offered to.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	NominatedClusterNames []string `json:"nominatedClusterNames,omitempty"`

	// clusterName is the worker cluster the workload was admitted in.
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`

	// unhealthyNodes lists nodes whose pods need new placement.
	// +listType=map
	// +listMapKey=name
	// +optional
	UnhealthyNodes []v1beta2.UnhealthyNode `json:"unhealthyNodes,omitempty"`

	// preemptionGates is v1beta2's field, kept so that a v1beta1 update does
	// not drop it.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PreemptionGates []v1beta2.PreemptionGateState `json:"preemptionGates,omitempty"`
}

// Admission is a quota reservation in a ClusterQueue.
type Admission struct {
	// clusterQueue holds the reservation.
	// +required
	ClusterQueue v1beta2.ClusterQueueReference `json:"clusterQueue"`

	// podSetAssignments gives the flavors and counts per PodSet.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=18
	// +required
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
}

// PodSetAssignment is the admission of one PodSet.
type PodSetAssignment struct {
	// name of the PodSet.
	// +kubebuilder:default=main
	// +required
	Name v1beta2.PodSetReference `json:"name"`

	// flavors maps each requested resource to its assigned flavor.
	// +optional
	Flavors map[corev1.ResourceName]v1beta2.ResourceFlavorReference `json:"flavors,omitempty"`

	// resourceUsage is the total quota reserved for the PodSet.
	// +optional
	ResourceUsage corev1.ResourceList `json:"resourceUsage,omitempty"`

	// count is the number of pods admitted.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count *int32 `json:"count,omitempty"`

	// topologyAssignment places the pods in topology domains.
	// +optional
	TopologyAssignment *TopologyAssignment `json:"topologyAssignment,omitempty"`

	// delayedTopologyRequest says the topology assignment waits for
	// provisioning.
	// +optional
	DelayedTopologyRequest *v1beta2.DelayedTopologyRequestState `json:"delayedTopologyRequest,omitempty"`
}

// TopologyAssignment is v1beta1's topology assignment: every domain with
// its values and pod count (v1beta2 encodes them in slices).
type TopologyAssignment struct {
	// levels are the node labels of the domains, widest first.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Levels []string `json:"levels"`

	// domains lists the domains and their pod counts.
	// +required
	// +listType=atomic
	Domains []TopologyDomainAssignment `json:"domains"`
}

// TopologyDomainAssignment is one domain and the number of pods in it.
type TopologyDomainAssignment struct {
	// values are the domain's label values, one per level.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Values []string `json:"values"`

	// count is the number of pods in the domain.
	// +required
	// +kubebuilder:validation:Minimum=1
	Count int32 `json:"count"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:shortName={kwl,kueueworkload,kueueworkloads}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Queue",JSONPath=".spec.queueName",type=string,description="LocalQueue the workload was submitted to"
// +kubebuilder:printcolumn:name="Reserved in",JSONPath=".status.admission.clusterQueue",type=string,description="ClusterQueue holding the quota reservation"
// +kubebuilder:printcolumn:name="Admitted",JSONPath=".status.conditions[?(@.type=='Admitted')].status",type=string,description="Whether the workload is admitted"
// +kubebuilder:printcolumn:name="Finished",JSONPath=".status.conditions[?(@.type=='Finished')].status",type=string,description="Whether the workload finished"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type=date,description="Time since creation"
// +kubebuilder:validation:XValidation:rule="!(has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(self.status.admission)) || size(self.spec.podSets) == size(self.status.admission.podSetAssignments)",message="status.admission.podSetAssignments needs one entry per spec.podSets entry while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')) || (has(oldSelf.spec.priorityClassSource) ? oldSelf.spec.priorityClassSource : '') == (has(self.spec.priorityClassSource) ? self.spec.priorityClassSource : '')",message="priorityClassSource cannot change while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')) || (has(self.spec.priorityClassSource) && self.spec.priorityClassSource == 'kueue.x-k8s.io/workloadpriorityclass' && has(oldSelf.spec.priorityClassName) && has(self.spec.priorityClassName)) || (has(oldSelf.spec.priorityClassName) ? oldSelf.spec.priorityClassName : '') == (has(self.spec.priorityClassName) ? self.spec.priorityClassName : '')",message="priorityClassName cannot change while quota is reserved, unless it names a WorkloadPriorityClass"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')) || (has(oldSelf.spec.queueName) == has(self.spec.queueName) && (!has(self.spec.queueName) || oldSelf.spec.queueName == self.spec.queueName))",message="queueName cannot change while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Admitted' && c.status == 'True') && has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'Admitted' && c.status == 'True')) || (has(oldSelf.spec.maximumExecutionTimeSeconds) ? oldSelf.spec.maximumExecutionTimeSeconds : 0) == (has(self.spec.maximumExecutionTimeSeconds) ? self.spec.maximumExecutionTimeSeconds : 0)",message="maximumExecutionTimeSeconds cannot change while the workload is admitted"

// Workload is the unit of admission: the pods of one job, with the quota they
// need.
type Workload struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds what the workload needs.
	// +optional
	Spec WorkloadSpec `json:"spec,omitempty"`
	// status holds the workload's admission state.
	// +optional
	Status WorkloadStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadList is a list of Workloads.
type WorkloadList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workload `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Workload{}, &WorkloadList{})
}
