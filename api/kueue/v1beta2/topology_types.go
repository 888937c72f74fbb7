package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TopologyLevel is one level of a topology, named by a node label.
type TopologyLevel struct {
	// nodeLabel is the node label whose values form the domains of this level.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
	NodeLabel string `json:"nodeLabel"`
}

// TopologySpec lists the levels of a topology.
type TopologySpec struct {
	// levels go from the widest domain (such as a block) to the narrowest
	// (such as a host).
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self == oldSelf || (self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname' && oldSelf[size(oldSelf) - 1].nodeLabel == 'kubernetes.io/hostname')",message="levels can only change when kubernetes.io/hostname is the lowest level before and after"
	// +kubebuilder:validation:XValidation:rule="self.all(l, self.exists_one(o, o.nodeLabel == l.nodeLabel))",message="levels must not repeat"
	// +kubebuilder:validation:XValidation:rule="!self.exists(l, l.nodeLabel == 'kubernetes.io/hostname') || self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'",message="kubernetes.io/hostname may only be the lowest level"
	Levels []TopologyLevel `json:"levels"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={topo}

// Topology describes how nodes are grouped (blocks, racks, hosts) for
// topology-aware scheduling.
type Topology struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the levels.
	// +optional
	Spec TopologySpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// TopologyList is a list of Topologies.
type TopologyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Topology `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Topology{}, &TopologyList{})
}
