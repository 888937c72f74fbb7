package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// AdmissionCheckSpec is v1beta2's AdmissionCheckSpec with v1beta1's
// retryDelayMinutes.
type AdmissionCheckSpec struct {
	// controllerName names the controller that decides the check. It cannot
	// be changed.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controllerName cannot be changed"
	ControllerName string `json:"controllerName"`

	// retryDelayMinutes is not used: v1beta2 has no such field, so the value
	// is not stored. Deprecated.
	// +kubebuilder:default=15
	// +optional
	RetryDelayMinutes *int64 `json:"retryDelayMinutes,omitempty"`

	// parameters points to an object holding the check's settings.
	// +optional
	Parameters *v1beta2.AdmissionCheckParametersReference `json:"parameters,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={ac}
// +kubebuilder:subresource:status

// AdmissionCheck is v1beta2's AdmissionCheck in v1beta1.
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
	Status v1beta2.AdmissionCheckStatus `json:"status,omitempty"`
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
