package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueue is the visibility view of a ClusterQueue: its pending
// workloads, served as the pendingworkloads subresource.
//
// +kubebuilder:object:root=true
type ClusterQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Summary lists the ClusterQueue's pending workloads.
	Summary PendingWorkloadsSummary `json:"pendingWorkloadsSummary"`
}

// ClusterQueueList is a list of ClusterQueue views.
//
// +kubebuilder:object:root=true
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ClusterQueue `json:"items"`
}

// LocalQueue is the visibility view of a LocalQueue: its pending
// workloads, served as the pendingworkloads subresource.
//
// +kubebuilder:object:root=true
type LocalQueue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Summary lists the LocalQueue's pending workloads.
	Summary PendingWorkloadsSummary `json:"pendingWorkloadsSummary"`
}

// LocalQueueList is a list of LocalQueue views.
//
// +kubebuilder:object:root=true
type LocalQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []LocalQueue `json:"items"`
}

// PendingWorkload is one pending workload, where it stands in its queues.
type PendingWorkload struct {
	// ObjectMeta holds the workload's name, namespace, creation time and
	// owners.
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Priority is the workload's effective priority.
	Priority int32 `json:"priority"`

	// LocalQueueName is the LocalQueue the workload was submitted to.
	LocalQueueName string `json:"localQueueName"`

	// PositionInClusterQueue is the 0-based place of the workload in the
	// order its ClusterQueue's scheduler considers it.
	PositionInClusterQueue int32 `json:"positionInClusterQueue"`

	// PositionInLocalQueue is the 0-based place of the workload among the
	// workloads of its LocalQueue, in the same order.
	PositionInLocalQueue int32 `json:"positionInLocalQueue"`
}

// PendingWorkloadsSummary is a page of pending workloads, in the order the
// scheduler considers them.
//
// +kubebuilder:object:root=true
type PendingWorkloadsSummary struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Items []PendingWorkload `json:"items"`
}

// PendingWorkloadOptions are the query parameters of a pendingworkloads
// request.
//
// +kubebuilder:object:root=true
type PendingWorkloadOptions struct {
	metav1.TypeMeta `json:",inline"`

	// Offset is the position of the first workload returned; 0 by default.
	Offset int64 `json:"offset"`

	// Limit is the most workloads returned; DefaultLimit by default, at
	// most MaxLimit.
	Limit int64 `json:"limit"`
}

const (
	// DefaultLimit is the page size when the request names none.
	DefaultLimit int64 = 1000
	// MaxLimit caps the page size.
	MaxLimit int64 = 100000
)
