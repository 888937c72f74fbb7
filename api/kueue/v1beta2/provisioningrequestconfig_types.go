package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Parameter is a value passed to a ProvisioningRequest.
// +kubebuilder:validation:MaxLength=255
type Parameter string

// ProvisioningRequestConfigPodSetMergePolicy says when PodSets may be merged
// into one pod set of the ProvisioningRequest.
// +kubebuilder:validation:Enum=IdenticalPodTemplates;IdenticalWorkloadSchedulingRequirements
type ProvisioningRequestConfigPodSetMergePolicy string

const (
	// IdenticalPodTemplates merges PodSets whose templates are equal.
	IdenticalPodTemplates ProvisioningRequestConfigPodSetMergePolicy = "IdenticalPodTemplates"
	// IdenticalWorkloadSchedulingRequirements merges PodSets with equal
	// requests, node selectors, tolerations, affinity and resource claims.
	IdenticalWorkloadSchedulingRequirements ProvisioningRequestConfigPodSetMergePolicy = "IdenticalWorkloadSchedulingRequirements"
)

// ProvisioningRequestConfigSpec configures the ProvisioningRequests created
// for a check.
type ProvisioningRequestConfigSpec struct {
	// provisioningClassName is the class of the ProvisioningRequests.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
	ProvisioningClassName string `json:"provisioningClassName"`

	// parameters are passed to the ProvisioningRequests. Job annotations with
	// the prefix provreq.kueue.x-k8s.io/ override them.
	// +kubebuilder:validation:MaxProperties=100
	// +optional
	Parameters map[string]Parameter `json:"parameters,omitempty"`

	// managedResources limits the ProvisioningRequest to PodSets that request
	// one of these resources. Empty means every PodSet.
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	// +optional
	ManagedResources []corev1.ResourceName `json:"managedResources,omitempty"`

	// retryStrategy says how failed provisioning is retried.
	// +kubebuilder:default={backoffLimitCount:3,backoffBaseSeconds:60,backoffMaxSeconds:1800}
	// +optional
	RetryStrategy *ProvisioningRequestRetryStrategy `json:"retryStrategy,omitempty"`

	// podSetUpdates says what to add to pods once capacity is provisioned.
	// +optional
	PodSetUpdates *ProvisioningRequestPodSetUpdates `json:"podSetUpdates,omitempty"`

	// podSetMergePolicy merges similar PodSets into one ProvisioningRequest
	// pod set. Unset means no merging.
	// +optional
	PodSetMergePolicy *ProvisioningRequestConfigPodSetMergePolicy `json:"podSetMergePolicy,omitempty"`
}

// ProvisioningRequestRetryStrategy is an exponential backoff.
type ProvisioningRequestRetryStrategy struct {
	// backoffLimitCount is the number of retries; 0 disables retrying.
	// +kubebuilder:default=3
	// +optional
	BackoffLimitCount *int32 `json:"backoffLimitCount,omitempty"`

	// backoffBaseSeconds is the first delay; each retry doubles it.
	// +kubebuilder:default=60
	// +optional
	BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`

	// backoffMaxSeconds caps the delay.
	// +kubebuilder:default=1800
	// +optional
	BackoffMaxSeconds *int32 `json:"backoffMaxSeconds,omitempty"`
}

// ProvisioningRequestPodSetUpdates lists updates applied to pods after provisioning.
type ProvisioningRequestPodSetUpdates struct {
	// nodeSelector entries pin pods to the provisioned nodes.
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:MaxItems=8
	// +optional
	NodeSelector []ProvisioningRequestPodSetUpdatesNodeSelector `json:"nodeSelector,omitempty"`
}

// ProvisioningRequestPodSetUpdatesNodeSelector adds one node selector whose
// value is read from the ProvisioningRequest's provisioningClassDetails.
type ProvisioningRequestPodSetUpdatesNodeSelector struct {
	// key of the node selector.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern="^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
	Key string `json:"key"`

	// valueFromProvisioningClassDetail names the detail holding the value.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32768
	ValueFromProvisioningClassDetail string `json:"valueFromProvisioningClassDetail"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={prc}

// ProvisioningRequestConfig holds the settings of a ProvisioningRequest
// admission check.
type ProvisioningRequestConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the settings.
	// +optional
	Spec ProvisioningRequestConfigSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// ProvisioningRequestConfigList is a list of ProvisioningRequestConfigs.
type ProvisioningRequestConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProvisioningRequestConfig `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ProvisioningRequestConfig{}, &ProvisioningRequestConfigList{})
}
