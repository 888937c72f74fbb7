// Package v1beta2 holds the Go types of the pending-workloads API,
// visibility.kueue.x-k8s.io/v1beta2, that the manager serves as an
// aggregated API (internal/visibility). The JSON shape matches Kueue's:
// GET .../clusterqueues/<cq>/pendingworkloads and
// .../namespaces/<ns>/localqueues/<lq>/pendingworkloads return a
// PendingWorkloadsSummary. The same types are served as v1beta1, whose
// shape is identical.
//
// +kubebuilder:object:generate=true
// +groupName=visibility.kueue.x-k8s.io
package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the pending-workloads API.
const GroupName = "visibility.kueue.x-k8s.io"

var (
	// GroupVersion is visibility.kueue.x-k8s.io/v1beta2, the preferred version.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1beta2"}
	// GroupVersionV1beta1 is visibility.kueue.x-k8s.io/v1beta1, served with
	// the same types.
	GroupVersionV1beta1 = schema.GroupVersion{Group: GroupName, Version: "v1beta1"}
)

// AddToScheme registers the kinds under v1beta2.
func AddToScheme(s *runtime.Scheme) error { return AddToSchemeAs(s, GroupVersion) }

// AddToSchemeAs registers the kinds, and the conversion of query parameters
// into PendingWorkloadOptions, under the given group version.
func AddToSchemeAs(s *runtime.Scheme, gv schema.GroupVersion) error {
	s.AddKnownTypes(gv,
		&ClusterQueue{}, &ClusterQueueList{},
		&LocalQueue{}, &LocalQueueList{},
		&PendingWorkloadsSummary{}, &PendingWorkloadOptions{},
	)
	metav1.AddToGroupVersion(s, gv)
	return addConversionFuncs(s)
}
