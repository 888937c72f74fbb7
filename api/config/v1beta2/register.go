package v1beta2

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

const (
	// GroupName is the API group of the configuration file.
	GroupName = "config.kueue.x-k8s.io"
	// Version is the API version this package implements.
	Version = "v1beta2"
	// Kind is the only kind of the group.
	Kind = "Configuration"
)

var (
	// GroupVersion names the group and version of the Configuration kind.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeBuilder registers the Configuration kind with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the Configuration kind to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&Configuration{})
}
