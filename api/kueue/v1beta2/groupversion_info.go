// Package v1beta2 holds the Go types of the kueue.x-k8s.io/v1beta2 API that Kuota
// serves. The JSON shape of every kind matches Kueue's v1beta2 schema exactly, so
// that manifests and clients written for Kueue work unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=kueue.x-k8s.io
package v1beta2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion names the API group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
