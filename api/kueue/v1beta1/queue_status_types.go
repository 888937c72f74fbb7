package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// FairSharingStatus is v1beta1's fair-sharing state of a ClusterQueue or
// Cohort: v1beta2's, plus admissionFairSharingStatus, which v1beta2 keeps
// only on LocalQueues. Kuota does not set it.
type FairSharingStatus struct {
	// weightedShare is the largest ratio, over resources, of usage above
	// nominal quota to lendable capacity, divided by the weight and scaled by
	// 1000.
	// +required
	WeightedShare int64 `json:"weightedShare"`

	// admissionFairSharingStatus is not set by Kuota and not stored.
	// +optional
	AdmissionFairSharingStatus *v1beta2.AdmissionFairSharingStatus `json:"admissionFairSharingStatus,omitempty"`
}

// ClusterQueuePendingWorkloadsStatus is v1beta1's list of a queue's pending
// workloads in its status. v1beta2 dropped it for the visibility API; Kuota
// does not set it.
type ClusterQueuePendingWorkloadsStatus struct {
	// clusterQueuePendingWorkload lists the workloads.
	// +listType=atomic
	// +optional
	Head []ClusterQueuePendingWorkload `json:"clusterQueuePendingWorkload,omitempty"`

	// lastChangeTime is when the list last changed.
	// +required
	LastChangeTime metav1.Time `json:"lastChangeTime"`
}

// ClusterQueuePendingWorkload names a pending workload.
type ClusterQueuePendingWorkload struct {
	// name of the workload.
	// +required
	Name string `json:"name"`
	// namespace of the workload.
	// +required
	Namespace string `json:"namespace"`
}

// LocalQueueFlavorStatus is v1beta1's description of a flavor in a
// LocalQueue's status. v1beta2 dropped it; Kuota does not set it.
type LocalQueueFlavorStatus struct {
	// name of the flavor.
	// +required
	Name v1beta2.ResourceFlavorReference `json:"name"`

	// resources the flavor has quota for.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Resources []corev1.ResourceName `json:"resources,omitempty"`

	// nodeLabels of the flavor.
	// +mapType=atomic
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`

	// nodeTaints of the flavor.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	NodeTaints []corev1.Taint `json:"nodeTaints,omitempty"`

	// topology of the flavor.
	// +optional
	Topology *TopologyInfo `json:"topology,omitempty"`
}

// TopologyInfo names a flavor's topology and its levels.
type TopologyInfo struct {
	// name of the Topology.
	// +required
	Name v1beta2.TopologyReference `json:"name"`

	// levels of the Topology.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Levels []string `json:"levels"`
}
