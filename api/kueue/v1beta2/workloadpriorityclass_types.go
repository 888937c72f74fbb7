package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={wpc}
// +kubebuilder:printcolumn:name="Value",JSONPath=".value",type=integer,description="Priority value"

// WorkloadPriorityClass gives workloads a priority for queueing and preemption
// without affecting the priority of their pods.
type WorkloadPriorityClass struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// value is the priority; higher is more important. Changing it does not
	// change workloads created before.
	// +required
	Value int32 `json:"value"`

	// description says what the class is for.
	// +kubebuilder:validation:MaxLength=2048
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

func init() {
	SchemeBuilder.Register(&WorkloadPriorityClass{}, &WorkloadPriorityClassList{})
}
