package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalQueueSpec defines a LocalQueue.
type LocalQueueSpec struct {
	// clusterQueue is the ClusterQueue that admits this queue's workloads.
	// It cannot be changed.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterQueue cannot be changed"
	// +optional
	ClusterQueue ClusterQueueReference `json:"clusterQueue,omitempty"`

	// stopPolicy holds the queue: Hold stops new admissions, HoldAndDrain also
	// evicts what is admitted.
	// +kubebuilder:default=None
	// +optional
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing sets the weight of this queue for admission fair sharing.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// LocalQueueFlavorUsage reports usage of the resources of one flavor.
type LocalQueueFlavorUsage struct {
	// name of the flavor.
	// +required
	Name ResourceFlavorReference `json:"name"`

	// resources lists the usage per resource.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Resources []LocalQueueResourceUsage `json:"resources"`
}

// LocalQueueResourceUsage reports usage of one resource.
type LocalQueueResourceUsage struct {
	// name of the resource.
	// +required
	Name corev1.ResourceName `json:"name"`

	// total is the amount in use.
	// +optional
	Total resource.Quantity `json:"total,omitempty"`
}

// LocalQueueFairSharingStatus reports the fair-sharing state of a LocalQueue.
type LocalQueueFairSharingStatus struct {
	// weightedShare has the meaning of ClusterQueue's weightedShare.
	// +required
	WeightedShare int64 `json:"weightedShare"`

	// admissionFairSharingStatus reports the decayed usage that admission
	// fair sharing orders by.
	// +optional
	AdmissionFairSharingStatus *AdmissionFairSharingStatus `json:"admissionFairSharingStatus,omitempty"`
}

// AdmissionFairSharingStatus reports decayed resource usage.
type AdmissionFairSharingStatus struct {
	// consumedResources is the usage, decayed over time.
	// +required
	ConsumedResources corev1.ResourceList `json:"consumedResources"`

	// lastUpdate is when consumedResources was last computed.
	// +required
	LastUpdate metav1.Time `json:"lastUpdate"`
}

// LocalQueueStatus reports the observed state of a LocalQueue.
type LocalQueueStatus struct {
	// conditions hold the latest observations; the Active condition tells
	// whether the queue accepts new workloads.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// pendingWorkloads counts workloads waiting for admission.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads counts workloads holding a quota reservation.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads counts admitted workloads that have not finished.
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// flavorsReservation is the quota reserved by this queue's workloads.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []LocalQueueFlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage is the quota used by this queue's admitted workloads.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsUsage []LocalQueueFlavorUsage `json:"flavorsUsage,omitempty"`

	// fairSharing reports the queue's fair-sharing state.
	// +optional
	FairSharing *LocalQueueFairSharingStatus `json:"fairSharing,omitempty"`
}

// LocalQueue condition types.
const (
	// LocalQueueActive tells whether the queue accepts new workloads.
	LocalQueueActive = "Active"
)

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName={queue,queues,lq}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterQueue",JSONPath=".spec.clusterQueue",type=string,description="ClusterQueue behind this queue"
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Workloads waiting for admission"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Admitted workloads not yet finished"

// LocalQueue is the namespaced queue that users submit workloads to; it feeds a
// ClusterQueue.
type LocalQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the queue's settings.
	// +optional
	Spec LocalQueueSpec `json:"spec,omitempty"`
	// status holds the observed state.
	// +optional
	Status LocalQueueStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// LocalQueueList is a list of LocalQueues.
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocalQueue `json:"items"`
}

func init() {
	SchemeBuilder.Register(&LocalQueue{}, &LocalQueueList{})
}
