package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// LocalQueueStatus is v1beta2's LocalQueueStatus with v1beta1's names:
// flavorUsage for flavorsUsage, and the flavors list v1beta2 dropped.
type LocalQueueStatus struct {
	// conditions hold the latest observations; Active tells whether the
	// queue can take workloads.
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

	// flavorsReservation is the quota reserved by this queue's workloads,
	// per flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []v1beta2.LocalQueueFlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorUsage is the quota used by this queue's admitted workloads, per
	// flavor (flavorsUsage in v1beta2).
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorUsage []v1beta2.LocalQueueFlavorUsage `json:"flavorUsage,omitempty"`

	// flavors is not set by Kuota and not stored.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Flavors []LocalQueueFlavorStatus `json:"flavors,omitempty"`

	// fairSharing reports the queue's admission fair-sharing state.
	// +optional
	FairSharing *v1beta2.LocalQueueFairSharingStatus `json:"fairSharing,omitempty"`
}

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:shortName={queue,queues,lq}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="ClusterQueue",JSONPath=".spec.clusterQueue",type=string,description="ClusterQueue behind this queue"
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Workloads waiting for admission"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Admitted workloads not yet finished"

// LocalQueue is a namespaced queue that users submit workloads to; it feeds
// one ClusterQueue.
type LocalQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec names the ClusterQueue and the queue's policies.
	// +optional
	Spec v1beta2.LocalQueueSpec `json:"spec,omitempty"`
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

// CohortStatus is v1beta2's CohortStatus with v1beta1's fair-sharing state.
type CohortStatus struct {
	// fairSharing reports the cohort's fair-sharing state.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={co}
// +kubebuilder:subresource:status

// Cohort groups ClusterQueues (and other cohorts) that share quota.
type Cohort struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the cohort's parent, quotas and fair-sharing weight.
	// +optional
	Spec v1beta2.CohortSpec `json:"spec,omitempty"`
	// status holds the observed state.
	// +optional
	Status CohortStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CohortList is a list of Cohorts.
type CohortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cohort `json:"items"`
}

func init() {
	SchemeBuilder.Register(&LocalQueue{}, &LocalQueueList{}, &Cohort{}, &CohortList{})
}
