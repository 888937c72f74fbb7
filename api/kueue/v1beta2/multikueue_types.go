package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MultiKueue constants shared by the manager and worker clusters.
const (
	// MultiKueueKubeConfigSecretKey is the key of a kubeconfig in a Secret.
	MultiKueueKubeConfigSecretKey = "kubeconfig"
	// MultiKueueOriginLabel marks objects created on a worker by a manager.
	MultiKueueOriginLabel = "kueue.x-k8s.io/multikueue-origin"
	// MultiKueueOriginUIDAnnotation records the UID of the manager's object.
	MultiKueueOriginUIDAnnotation = "kueue.x-k8s.io/multikueue-origin-uid"
	// MultiKueueClusterActive tells whether a worker cluster is connected.
	MultiKueueClusterActive = "Active"
)

// MultiKueueConfigQuotaManagementMode says who manages the quotas of the
// manager's ClusterQueue.
// +kubebuilder:validation:Enum=Manual;Automated
type MultiKueueConfigQuotaManagementMode string

const (
	// MultiKueueQuotaManual leaves quotas to the administrator.
	MultiKueueQuotaManual MultiKueueConfigQuotaManagementMode = "Manual"
	// MultiKueueQuotaAutomated derives quotas from the worker clusters.
	MultiKueueQuotaAutomated MultiKueueConfigQuotaManagementMode = "Automated"
)

// MultiKueueConfigSpec lists the worker clusters of a MultiKueue check.
type MultiKueueConfigSpec struct {
	// clusters names MultiKueueCluster objects, in the order workloads are
	// offered to them.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(o, o == c))",message="cluster names must not repeat"
	Clusters []string `json:"clusters"`

	// quotaManagement says who manages the manager ClusterQueue's quotas.
	// Unset behaves as Manual.
	// +optional
	QuotaManagement *MultiKueueConfigQuotaManagementMode `json:"quotaManagement,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={mkconf}

// MultiKueueConfig lists the worker clusters a MultiKueue admission check
// dispatches to.
type MultiKueueConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the cluster list.
	// +optional
	Spec MultiKueueConfigSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// MultiKueueConfigList is a list of MultiKueueConfigs.
type MultiKueueConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiKueueConfig `json:"items"`
}

// LocationType says how a kubeconfig location is read.
// +kubebuilder:validation:Enum=Secret;Path
type LocationType string

const (
	// SecretLocationType reads the kubeconfig from a Secret in the manager's namespace.
	SecretLocationType LocationType = "Secret"
	// PathLocationType reads the kubeconfig from a file.
	PathLocationType LocationType = "Path"
)

// KubeConfig points at the kubeconfig of a worker cluster.
type KubeConfig struct {
	// location is the Secret name or the file path.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Location string `json:"location"`

	// locationType says whether location names a Secret or a file.
	// +kubebuilder:default=Secret
	// +optional
	LocationType LocationType `json:"locationType,omitempty"`
}

// ClusterProfileReference names a multicluster.x-k8s.io ClusterProfile.
type ClusterProfileReference struct {
	// name of the ClusterProfile.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Name string `json:"name"`
}

// ClusterSource says how to reach a worker cluster; exactly one field is set.
// +kubebuilder:validation:XValidation:rule="has(self.kubeConfig) != has(self.clusterProfileRef)",message="set exactly one of kubeConfig and clusterProfileRef"
type ClusterSource struct {
	// kubeConfig reaches the cluster through a kubeconfig.
	// +optional
	KubeConfig *KubeConfig `json:"kubeConfig,omitempty"`

	// clusterProfileRef reaches the cluster through a ClusterProfile.
	// +optional
	ClusterProfileRef *ClusterProfileReference `json:"clusterProfileRef,omitempty"`
}

// MultiKueueClusterSpec defines a worker cluster.
type MultiKueueClusterSpec struct {
	// clusterSource says how to connect to the cluster.
	// +required
	ClusterSource ClusterSource `json:"clusterSource"`
}

// MultiKueueClusterStatus reports the connection state.
type MultiKueueClusterStatus struct {
	// conditions hold the latest observations; Active tells whether the
	// cluster is connected.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={mkc}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Connected",JSONPath=".status.conditions[?(@.type=='Active')].status",type=string,description="Whether the cluster is connected"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type=date,description="Time since creation"

// MultiKueueCluster is a worker cluster that MultiKueue can dispatch to.
type MultiKueueCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says how to reach the cluster.
	// +optional
	Spec MultiKueueClusterSpec `json:"spec,omitempty"`
	// status holds the observed state.
	// +optional
	Status MultiKueueClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MultiKueueClusterList is a list of MultiKueueClusters.
type MultiKueueClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MultiKueueCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&MultiKueueConfig{}, &MultiKueueConfigList{},
		&MultiKueueCluster{}, &MultiKueueClusterList{})
}
