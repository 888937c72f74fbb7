package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// MultiKueueConfigSpec is v1beta2's MultiKueueConfigSpec in v1beta1.
type MultiKueueConfigSpec struct {
	// clusters lists the MultiKueueClusters that workloads are dispatched to.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Clusters []string `json:"clusters"`

	// quotaManagement is v1beta2's field, kept so that a v1beta1 update does
	// not drop it.
	// +kubebuilder:validation:Enum=Manual;Automated
	// +optional
	QuotaManagement *v1beta2.MultiKueueConfigQuotaManagementMode `json:"quotaManagement,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={mkconf}

// MultiKueueConfig is v1beta2's MultiKueueConfig in v1beta1.
type MultiKueueConfig struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the worker clusters.
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

// MultiKueueClusterSpec says how to reach a worker cluster, v1beta1's way:
// kubeConfig and clusterProfileRef sit directly in the spec (v1beta2 moves
// them under clusterSource).
// +kubebuilder:validation:XValidation:rule="has(self.kubeConfig) != has(self.clusterProfileRef)",message="set exactly one of kubeConfig and clusterProfileRef"
type MultiKueueClusterSpec struct {
	// kubeConfig says where the worker's kubeconfig is.
	// +optional
	KubeConfig *KubeConfig `json:"kubeConfig,omitempty"`

	// clusterProfileRef names a ClusterProfile describing the worker.
	// +optional
	ClusterProfileRef *v1beta2.ClusterProfileReference `json:"clusterProfileRef,omitempty"`
}

// KubeConfig says where a worker cluster's kubeconfig is.
type KubeConfig struct {
	// location is the Secret's name (in the manager's namespace) or the path
	// of a file.
	// +required
	Location string `json:"location"`

	// locationType says what location is.
	// +kubebuilder:validation:Enum=Secret;Path
	// +kubebuilder:default=Secret
	// +required
	LocationType v1beta2.LocationType `json:"locationType"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={mkc}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Connected",JSONPath=".status.conditions[?(@.type=='Active')].status",type=string,description="Whether the cluster is connected"
// +kubebuilder:printcolumn:name="Age",JSONPath=".metadata.creationTimestamp",type=date,description="Time since creation"

// MultiKueueCluster is a worker cluster that MultiKueue may dispatch to.
type MultiKueueCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says how to reach the cluster.
	// +optional
	Spec MultiKueueClusterSpec `json:"spec,omitempty"`
	// status holds the connection state.
	// +optional
	Status v1beta2.MultiKueueClusterStatus `json:"status,omitempty"`
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
