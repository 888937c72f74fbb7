// Package v1beta1 holds the Go types of kueue.x-k8s.io/v1beta1, the older
// version of the API that Kueue still serves beside v1beta2. Kuota serves it
// too, so that manifests and clients written for it keep working: v1beta2 is
// the version stored, and internal/conversion converts between the two (the
// API server calls it for LocalQueue, ClusterQueue, Cohort, Workload and
// MultiKueueCluster; the other kinds have the same shape in both versions).
//
// Only the types whose shape differs from v1beta2 are defined here; the rest
// are v1beta2's own. v1beta1 also keeps the fields v1beta2 added, so that a
// client that reads and writes v1beta1 loses nothing of an object.
//
// +kubebuilder:object:generate=true
// +groupName=kueue.x-k8s.io
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion names the API group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
