package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={flavor,flavors,rf}

// ResourceFlavor is v1beta2's ResourceFlavor in v1beta1.
type ResourceFlavor struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the flavor's nodes.
	// +optional
	Spec v1beta2.ResourceFlavorSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceFlavorList is a list of ResourceFlavors.
type ResourceFlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceFlavor `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={topo}

// Topology is v1beta2's Topology in v1beta1.
type Topology struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the levels.
	// +optional
	Spec v1beta2.TopologySpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// TopologyList is a list of Topologies.
type TopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topology `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={wpc}
// +kubebuilder:printcolumn:name="Value",JSONPath=".value",type=integer,description="Priority value"

// WorkloadPriorityClass is v1beta2's WorkloadPriorityClass in v1beta1.
type WorkloadPriorityClass struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// value is the priority; higher is more important.
	// +required
	Value int32 `json:"value"`

	// description says what the class is for.
	// +optional
	Description string `json:"description,omitempty"`
}

// +kubebuilder:object:root=true

// WorkloadPriorityClassList is a list of WorkloadPriorityClasses.
type WorkloadPriorityClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkloadPriorityClass `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={prc}

// ProvisioningRequestConfig is v1beta2's ProvisioningRequestConfig in v1beta1.
type ProvisioningRequestConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the settings.
	// +optional
	Spec v1beta2.ProvisioningRequestConfigSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ProvisioningRequestConfigList is a list of ProvisioningRequestConfigs.
type ProvisioningRequestConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequestConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceFlavor{}, &ResourceFlavorList{}, &Topology{}, &TopologyList{},
		&WorkloadPriorityClass{}, &WorkloadPriorityClassList{},
		&ProvisioningRequestConfig{}, &ProvisioningRequestConfigList{})
}
