package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadSpec defines a Workload: the pods a job needs and where it queues.
// +kubebuilder:validation:XValidation:rule="!has(self.priorityClassRef) || has(self.priority)",message="priority must be set when priorityClassRef is set"
type WorkloadSpec struct {
	// podSets are the groups of identical pods that make up the workload.
	// Each one is assigned flavors separately. They cannot change while the
	// workload holds a quota reservation.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=18
	PodSets []PodSet `json:"podSets,omitempty"`

	// queueName is the LocalQueue, in the workload's namespace, that the
	// workload is submitted to.
	// +optional
	QueueName LocalQueueName `json:"queueName,omitempty"`

	// priorityClassRef is the class the priority was taken from.
	// +optional
	PriorityClassRef *PriorityClassRef `json:"priorityClassRef,omitempty"`

	// priority orders the workload in its queue and decides preemption;
	// higher is more important. It is copied from the priority class.
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// active set to false keeps the workload from being admitted, and evicts
	// it if it is admitted.
	// +kubebuilder:default=true
	// +optional
	Active *bool `json:"active,omitempty"`

	// maximumExecutionTimeSeconds, when set, deactivates the workload once
	// it has been admitted for this long in total.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaximumExecutionTimeSeconds *int32 `json:"maximumExecutionTimeSeconds,omitempty"`

	// preemptionGates, while closed, keep the workload from preempting others.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	// +optional
	PreemptionGates []PreemptionGate `json:"preemptionGates,omitempty"`
}

// PriorityClassGroup is the API group of a priority class.
// +kubebuilder:validation:Enum=kueue.x-k8s.io;scheduling.k8s.io
type PriorityClassGroup string

// PriorityClassKind is the kind of a priority class.
// +kubebuilder:validation:Enum=WorkloadPriorityClass;PriorityClass
type PriorityClassKind string

const (
	// WorkloadPriorityClassGroup is the group of WorkloadPriorityClass.
	WorkloadPriorityClassGroup PriorityClassGroup = "kueue.x-k8s.io"
	// PodPriorityClassGroup is the group of the pods' PriorityClass.
	PodPriorityClassGroup PriorityClassGroup = "scheduling.k8s.io"
	// WorkloadPriorityClassKind is the kind WorkloadPriorityClass.
	WorkloadPriorityClassKind PriorityClassKind = "WorkloadPriorityClass"
	// PodPriorityClassKind is the kind PriorityClass.
	PodPriorityClassKind PriorityClassKind = "PriorityClass"
)

// PriorityClassRef names a WorkloadPriorityClass or a PriorityClass.
// +kubebuilder:validation:XValidation:rule="self.group != 'scheduling.k8s.io' || self.kind == 'PriorityClass'",message="group scheduling.k8s.io requires kind PriorityClass"
// +kubebuilder:validation:XValidation:rule="self.group != 'kueue.x-k8s.io' || self.kind == 'WorkloadPriorityClass'",message="group kueue.x-k8s.io requires kind WorkloadPriorityClass"
type PriorityClassRef struct {
	// group of the class.
	// +required
	Group PriorityClassGroup `json:"group"`

	// kind of the class.
	// +required
	Kind PriorityClassKind `json:"kind"`

	// name of the class.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	Name string `json:"name"`
}

// PreemptionGate names a gate that must open before the workload may preempt.
type PreemptionGate struct {
	// name of the gate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
}

// PodSet is a group of pods with the same template.
// +kubebuilder:validation:XValidation:rule="!has(self.minCount) || self.minCount <= self.count",message="minCount must not exceed count"
type PodSet struct {
	// name identifies the PodSet within the workload.
	// +kubebuilder:default=main
	// +optional
	Name PodSetReference `json:"name,omitempty"`

	// template is the pod template; its requests decide the quota needed.
	// +required
	Template corev1.PodTemplateSpec `json:"template"`

	// count is the number of pods.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Count int32 `json:"count"`

	// minCount, when set, lets the workload be admitted with fewer pods (at
	// least this many) when count does not fit. At most one PodSet may set it.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinCount *int32 `json:"minCount,omitempty"`

	// topologyRequest asks for the pods to be placed within a topology domain.
	// +optional
	TopologyRequest *PodSetTopologyRequest `json:"topologyRequest,omitempty"`
}

// PodSetTopologyRequest asks for topology-aware placement of a PodSet.
type PodSetTopologyRequest struct {
	// required names a topology level; all pods must fit in one domain of it.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Required *string `json:"required,omitempty"`

	// preferred names a topology level; pods are packed into one domain of it
	// when possible, and spread to wider levels otherwise.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Preferred *string `json:"preferred,omitempty"`

	// unconstrained places pods anywhere that fits.
	// +optional
	Unconstrained *bool `json:"unconstrained,omitempty"`

	// podIndexLabel is the pod label that carries the pod's index.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	PodIndexLabel *string `json:"podIndexLabel,omitempty"`

	// subGroupIndexLabel is the pod label carrying the index of the
	// replicated job the pod belongs to.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	SubGroupIndexLabel *string `json:"subGroupIndexLabel,omitempty"`

	// subGroupCount is the number of replicated jobs in the PodSet.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SubGroupCount *int32 `json:"subGroupCount,omitempty"`

	// podSetGroupName makes PodSets with the same value get the same flavor
	// and topology domain.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	PodSetGroupName *string `json:"podSetGroupName,omitempty"`

	// podSetSliceRequiredTopology names the level each slice of pods must fit in.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	PodSetSliceRequiredTopology *string `json:"podSetSliceRequiredTopology,omitempty"`

	// podSetSliceSize is the number of pods in a slice.
	// +kubebuilder:validation:Minimum=1
	// +optional
	PodSetSliceSize *int32 `json:"podSetSliceSize,omitempty"`

	// podsetSliceRequiredTopologyConstraints gives several slice layers,
	// outermost first. Excludes the two single-layer slice fields.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=3
	// +optional
	PodsetSliceRequiredTopologyConstraints []PodsetSliceRequiredTopologyConstraint `json:"podsetSliceRequiredTopologyConstraints,omitempty"`
}

// PodsetSliceRequiredTopologyConstraint is one layer of slices.
type PodsetSliceRequiredTopologyConstraint struct {
	// topology names the level each slice must fit in.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Topology string `json:"topology"`

	// size is the number of pods per slice.
	// +required
	// +kubebuilder:validation:Minimum=1
	Size int32 `json:"size"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName={kwl,kueueworkload,kueueworkloads}
// +kubebuilder:subresource:status
// +kubebuilder:selectablefield:JSONPath=".status.admission.clusterQueue"
// +kubebuilder:printcolumn:name="Queue",JSONPath=".spec.queueName",type=string,description="LocalQueue the workload was submitted to"
// +kubebuilder:printcolumn:name="Reserved in",JSONPath=".status.admission.clusterQueue",type=string,description="ClusterQueue holding the quota reservation"
// +kubebuilder:printcolumn:name="Admitted",JSONPath=".status.conditions[?(@.type=='Admitted')].status",type=string,description="Whether the workload is admitted"
// +kubebuilder:printcolumn:name="Finished",JSONPath=".status.conditions[?(@.type=='Finished')].status",type=string,description="Whether the workload finished"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type=date,description="Time since creation"
// +kubebuilder:validation:XValidation:rule="!(has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(self.status.admission)) || size(self.spec.podSets) == size(self.status.admission.podSetAssignments)",message="status.admission.podSetAssignments needs one entry per spec.podSets entry while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')) || has(oldSelf.spec.priorityClassRef) == has(self.spec.priorityClassRef)",message="priorityClassRef cannot be added or removed while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(oldSelf.spec.priorityClassRef) && has(self.spec.priorityClassRef)) || oldSelf.spec.priorityClassRef.group == self.spec.priorityClassRef.group",message="priorityClassRef.group cannot change while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(oldSelf.spec.priorityClassRef) && has(self.spec.priorityClassRef)) || oldSelf.spec.priorityClassRef.kind == self.spec.priorityClassRef.kind",message="priorityClassRef.kind cannot change while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(oldSelf.spec.priorityClassRef) && has(self.spec.priorityClassRef) && self.spec.priorityClassRef.group == 'scheduling.k8s.io' && self.spec.priorityClassRef.kind == 'PriorityClass') || oldSelf.spec.priorityClassRef.name == self.spec.priorityClassRef.name",message="priorityClassRef.name of a scheduling.k8s.io PriorityClass cannot change while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True') && has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'QuotaReserved' && c.status == 'True')) || (has(oldSelf.spec.queueName) == has(self.spec.queueName) && (!has(self.spec.queueName) || oldSelf.spec.queueName == self.spec.queueName))",message="queueName cannot change while quota is reserved"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Admitted' && c.status == 'True') && has(self.status) && has(self.status.conditions) && self.status.conditions.exists(c, c.type == 'Admitted' && c.status == 'True')) || (has(oldSelf.spec.maximumExecutionTimeSeconds) ? oldSelf.spec.maximumExecutionTimeSeconds : 0) == (has(self.spec.maximumExecutionTimeSeconds) ? self.spec.maximumExecutionTimeSeconds : 0)",message="maximumExecutionTimeSeconds cannot change while the workload is admitted"

// Workload is the unit of admission: the pods of one job, with the quota they
// need. Job integrations create one per job; it can also be created directly.
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
