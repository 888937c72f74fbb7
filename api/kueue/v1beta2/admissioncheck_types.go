package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Controller names of the admission checks built into Kuota.
const (
	// ProvisioningRequestControllerName handles checks backed by cluster-autoscaler ProvisioningRequests.
	ProvisioningRequestControllerName = "kueue.x-k8s.io/provisioning-request"
	// MultiKueueControllerName handles checks that dispatch workloads to other clusters.
	MultiKueueControllerName = "kueue.x-k8s.io/multikueue"
)

// AdmissionCheckSpec defines an AdmissionCheck.
type AdmissionCheckSpec struct {
	// controllerName names the controller that decides this check. It
	// cannot be changed.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controllerName cannot be changed"
	ControllerName string `json:"controllerName"`

	// parameters points at an object holding the controller's settings for
	// this check.
	// +optional
	Parameters *AdmissionCheckParametersReference `json:"parameters,omitempty"`
}

// AdmissionCheckParametersReference points at a cluster-scoped object.
type AdmissionCheckParametersReference struct {
	// apiGroup of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	APIGroup string `json:"apiGroup"`

	// kind of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^(?i)[a-z]([-a-z0-9]*[a-z0-9])?$"
	Kind string `json:"kind"`

	// name of the referenced object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
	Name string `json:"name"`
}

// AdmissionCheckStatus reports the observed state of an AdmissionCheck.
type AdmissionCheckStatus struct {
	// conditions hold the latest observations; the Active condition tells
	// whether the check's controller is ready to decide it.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// AdmissionCheck condition types.
const (
	// AdmissionCheckActive tells whether the check's controller is ready.
	AdmissionCheckActive = "Active"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={ac}
// +kubebuilder:subresource:status

// AdmissionCheck is a condition, decided by some controller, that a workload
// must pass before it is admitted.
type AdmissionCheck struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the check's settings.
	// +optional
	Spec AdmissionCheckSpec `json:"spec,omitempty"`
	// status holds the observed state.
	// +optional
	Status AdmissionCheckStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AdmissionCheckList is a list of AdmissionChecks.
type AdmissionCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AdmissionCheck `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AdmissionCheck{}, &AdmissionCheckList{})
}
