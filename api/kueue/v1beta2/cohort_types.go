package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CohortSpec defines a Cohort.
// +kubebuilder:validation:XValidation:rule="has(self.parentName) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(q, !has(q.borrowingLimit) && !has(q.lendingLimit))))",message="borrowingLimit and lendingLimit can only be set when parentName is set"
type CohortSpec struct {
	// parentName places this cohort under another one, forming a tree. The
	// parent need not exist. Unset makes this cohort a root. A cycle of
	// parents disables every queue in it until it is broken.
	// +optional
	ParentName CohortReference `json:"parentName,omitempty"`

	// resourceGroups adds quota shared by the whole subtree. borrowingLimit
	// and lendingLimit bound what the subtree borrows from, and lends to, the
	// parent, so they require parentName.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`

	// fairSharing sets the weight of this cohort among its siblings.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`
}

// CohortStatus reports the observed state of a Cohort.
type CohortStatus struct {
	// fairSharing reports the cohort's fair-sharing state.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={co}
// +kubebuilder:subresource:status

// Cohort groups ClusterQueues (and other Cohorts) that share quota.
type Cohort struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the cohort's settings.
	// +optional
	Spec CohortSpec `json:"spec,omitempty"`
	// status holds the observed state.
	// +optional
	Status CohortStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// CohortList is a list of Cohorts.
type CohortList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cohort `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Cohort{}, &CohortList{})
}
