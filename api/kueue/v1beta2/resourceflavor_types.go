package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceFlavorSpec describes the nodes that a flavor stands for.
// +kubebuilder:validation:XValidation:rule="!has(self.topologyName) || (has(self.nodeLabels) && size(self.nodeLabels) > 0)",message="nodeLabels needs at least one entry when topologyName is set"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.topologyName) || (has(self.topologyName) && self.topologyName == oldSelf.topologyName)",message="topologyName cannot be changed or removed once set"
type ResourceFlavorSpec struct {
	// nodeLabels are the labels of the nodes this flavor stands for. A PodSet
	// can only get this flavor when its node selector and required node
	// affinity agree with these labels, and admitted pods get them as node
	// selectors.
	// +mapType=atomic
	// +kubebuilder:validation:MaxProperties=8
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`

	// nodeTaints are taints of the nodes of this flavor. A PodSet must
	// tolerate the NoSchedule and NoExecute ones to get the flavor.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="taint effect must be one of NoSchedule, PreferNoSchedule, NoExecute"
	// +optional
	NodeTaints []corev1.Taint `json:"nodeTaints,omitempty"`

	// tolerations are added to the pods admitted with this flavor, and are
	// taken into account when matching nodeTaints.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Tolerations Tolerations `json:"tolerations,omitempty"`

	// topologyName makes this a topology-aware flavor, placing pods by the
	// levels of the named Topology. It cannot be changed once set.
	// +optional
	TopologyName *TopologyReference `json:"topologyName,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={flavor,flavors,rf}

// ResourceFlavor names a kind of node (machine type, GPU model, spot or
// on-demand...) that quota is counted against.
type ResourceFlavor struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec describes the flavor's nodes.
	// +optional
	Spec ResourceFlavorSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ResourceFlavorList is a list of ResourceFlavors.
type ResourceFlavorList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceFlavor `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceFlavor{}, &ResourceFlavorList{})
}

// Tolerations is a list of tolerations with the same rules that the API server
// applies to pod tolerations, checked by CEL.
// +kubebuilder:validation:XValidation:rule="self.all(t, has(t.key) || t.operator == 'Exists')",message="operator must be Exists when key is empty"
// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.tolerationSeconds) || t.effect == 'NoExecute')",message="tolerationSeconds requires effect NoExecute"
// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Equal', 'Exists'])",message="operator must be Equal or Exists"
// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value))",message="value must be empty when operator is Exists"
// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="effect must be one of NoSchedule, PreferNoSchedule, NoExecute"
type Tolerations []corev1.Toleration
