package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ClusterQueueSpec is v1beta2's ClusterQueueSpec with v1beta1's names:
// cohort for cohortName, and admissionChecks, a plain list of checks that
// v1beta2 folds into admissionChecksStrategy.
// +kubebuilder:validation:XValidation:rule="has(self.cohort) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(q, !has(q.borrowingLimit))))",message="borrowingLimit can only be set when cohort is set"
// +kubebuilder:validation:XValidation:rule="has(self.cohort) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(q, !has(q.lendingLimit))))",message="lendingLimit can only be set when cohort is set"
type ClusterQueueSpec struct {
	// resourceGroups lists the queue's quotas.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []v1beta2.ResourceGroup `json:"resourceGroups,omitempty"`

	// cohort places the queue in a cohort (cohortName in v1beta2).
	// +optional
	Cohort v1beta2.CohortReference `json:"cohort,omitempty"`

	// queueingStrategy decides the order of admission among pending workloads.
	// +kubebuilder:default=BestEffortFIFO
	// +optional
	QueueingStrategy v1beta2.QueueingStrategy `json:"queueingStrategy,omitempty"`

	// namespaceSelector picks the namespaces whose workloads may use this
	// queue.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// flavorFungibility decides when to try the next flavor.
	// +kubebuilder:default={}
	// +optional
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`

	// preemption sets which workloads a pending workload may preempt.
	// +kubebuilder:default={}
	// +optional
	Preemption *v1beta2.ClusterQueuePreemption `json:"preemption,omitempty"`

	// admissionChecks lists checks that apply to every workload of the queue;
	// v1beta2 stores them in admissionChecksStrategy (both may be set: the
	// checks of the two are merged).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AdmissionChecks []v1beta2.AdmissionCheckReference `json:"admissionChecks,omitempty"`

	// admissionChecksStrategy lists the admission checks, optionally per flavor.
	// +optional
	AdmissionChecksStrategy *v1beta2.AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`

	// stopPolicy holds the queue.
	// +kubebuilder:default=None
	// +optional
	StopPolicy *v1beta2.StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing sets the weight of this queue among its cohort siblings.
	// +optional
	FairSharing *v1beta2.FairSharing `json:"fairSharing,omitempty"`

	// admissionScope turns on admission fair sharing.
	// +optional
	AdmissionScope *v1beta2.AdmissionScope `json:"admissionScope,omitempty"`

	// concurrentAdmissionPolicy is v1beta2's field, kept so that a v1beta1
	// update does not drop it.
	// +optional
	ConcurrentAdmissionPolicy *v1beta2.ConcurrentAdmissionPolicy `json:"concurrentAdmissionPolicy,omitempty"`
}

// FlavorFungibilityPolicy is v1beta2's policy plus v1beta1's deprecated
// names: Borrow (whenCanBorrow) and Preempt (whenCanPreempt), both stored as
// MayStopSearch. Each field lists the values it accepts.
type FlavorFungibilityPolicy string

const (
	// Borrow is v1beta1's name of MayStopSearch for whenCanBorrow.
	Borrow FlavorFungibilityPolicy = "Borrow"
	// Preempt is v1beta1's name of MayStopSearch for whenCanPreempt.
	Preempt FlavorFungibilityPolicy = "Preempt"
)

// FlavorFungibility decides how flavors are searched.
// +kubebuilder:validation:XValidation:rule="!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')",message="preference is only allowed when whenCanBorrow and whenCanPreempt are both TryNextFlavor"
type FlavorFungibility struct {
	// whenCanBorrow applies when the workload fits the flavor only by borrowing.
	// +kubebuilder:validation:Enum=MayStopSearch;TryNextFlavor;Borrow
	// +kubebuilder:default=MayStopSearch
	// +optional
	WhenCanBorrow FlavorFungibilityPolicy `json:"whenCanBorrow,omitempty"`

	// whenCanPreempt applies when the workload fits the flavor only by preempting.
	// +kubebuilder:validation:Enum=MayStopSearch;TryNextFlavor;Preempt
	// +kubebuilder:default=TryNextFlavor
	// +optional
	WhenCanPreempt FlavorFungibilityPolicy `json:"whenCanPreempt,omitempty"`

	// preference chooses among flavors that all need borrowing or preemption.
	// +optional
	Preference *v1beta2.FlavorFungibilityPreference `json:"preference,omitempty"`
}

// ClusterQueueStatus is v1beta2's ClusterQueueStatus with v1beta1's
// pendingWorkloadsStatus and fair-sharing state, which Kuota does not set.
type ClusterQueueStatus struct {
	// conditions hold the latest observations.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// flavorsReservation is the quota reserved, per flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []v1beta2.FlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage is the quota used by admitted workloads, per flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsUsage []v1beta2.FlavorUsage `json:"flavorsUsage,omitempty"`

	// pendingWorkloads counts workloads waiting for admission.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads counts workloads holding a quota reservation.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads counts admitted workloads that have not finished.
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// pendingWorkloadsStatus is not set by Kuota and not stored; the
	// visibility API lists pending workloads.
	// +optional
	PendingWorkloadsStatus *ClusterQueuePendingWorkloadsStatus `json:"pendingWorkloadsStatus,omitempty"`

	// fairSharing reports the queue's fair-sharing state.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="kueue.x-k8s.io/v1beta1 is deprecated; use kueue.x-k8s.io/v1beta2"
// +kubebuilder:resource:scope=Cluster,shortName={cq}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cohort",JSONPath=".spec.cohort",type=string,description="Cohort of the queue"
// +kubebuilder:printcolumn:name="Strategy",JSONPath=".spec.queueingStrategy",type=string,description="Queueing strategy",priority=1
// +kubebuilder:printcolumn:name="Pending Workloads",JSONPath=".status.pendingWorkloads",type=integer,description="Workloads waiting for admission"
// +kubebuilder:printcolumn:name="Admitted Workloads",JSONPath=".status.admittedWorkloads",type=integer,description="Admitted workloads not yet finished",priority=1

// ClusterQueue is a cluster-wide pool of quota that workloads are admitted against.
type ClusterQueue struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the object.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec holds the quotas and policies.
	// +optional
	Spec ClusterQueueSpec `json:"spec,omitempty"`
	// status holds the observed state.
	// +optional
	Status ClusterQueueStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ClusterQueueList is a list of ClusterQueues.
type ClusterQueueList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterQueue `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ClusterQueue{}, &ClusterQueueList{})
}
