package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterQueueSpec defines the quotas and policies of a ClusterQueue.
// +kubebuilder:validation:XValidation:rule="has(self.cohortName) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(q, !has(q.borrowingLimit))))",message="borrowingLimit can only be set when cohortName is set"
// +kubebuilder:validation:XValidation:rule="has(self.cohortName) || !has(self.resourceGroups) || self.resourceGroups.all(g, g.flavors.all(f, f.resources.all(q, !has(q.lendingLimit))))",message="lendingLimit can only be set when cohortName is set"
type ClusterQueueSpec struct {
	// resourceGroups lists the quotas of this queue, grouped by the resources
	// that are assigned one flavor together.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ResourceGroups []ResourceGroup `json:"resourceGroups,omitempty"`

	// cohortName places the queue in a cohort, whose members can borrow unused
	// quota from each other. The Cohort object need not exist. Empty means the
	// queue neither borrows nor lends.
	// +optional
	CohortName CohortReference `json:"cohortName,omitempty"`

	// queueingStrategy decides the order of admission among pending workloads.
	// StrictFIFO never admits past a pending head; BestEffortFIFO admits later
	// workloads when the head does not fit.
	// +kubebuilder:default=BestEffortFIFO
	// +optional
	QueueingStrategy QueueingStrategy `json:"queueingStrategy,omitempty"`

	// namespaceSelector picks the namespaces whose workloads may use this
	// queue. Unset allows none; an empty selector allows all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`

	// flavorFungibility decides when to try the next flavor instead of
	// borrowing or preempting in the current one.
	// +kubebuilder:default={}
	// +optional
	FlavorFungibility *FlavorFungibility `json:"flavorFungibility,omitempty"`

	// preemption sets which workloads a pending workload may preempt.
	// +kubebuilder:default={}
	// +optional
	Preemption *ClusterQueuePreemption `json:"preemption,omitempty"`

	// admissionChecksStrategy lists the admission checks a workload must pass
	// before it is admitted, optionally only for some flavors.
	// +optional
	AdmissionChecksStrategy *AdmissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`

	// stopPolicy holds the queue: Hold stops new admissions, HoldAndDrain also
	// evicts what is admitted.
	// +kubebuilder:default=None
	// +optional
	StopPolicy *StopPolicy `json:"stopPolicy,omitempty"`

	// fairSharing sets the weight of this queue among its cohort siblings.
	// +optional
	FairSharing *FairSharing `json:"fairSharing,omitempty"`

	// admissionScope turns on admission fair sharing between the LocalQueues
	// of this ClusterQueue.
	// +optional
	AdmissionScope *AdmissionScope `json:"admissionScope,omitempty"`

	// concurrentAdmissionPolicy lets a workload hold a cheaper flavor while it
	// keeps trying for a preferred one. Immutable.
	// +optional
	ConcurrentAdmissionPolicy *ConcurrentAdmissionPolicy `json:"concurrentAdmissionPolicy,omitempty"`
}

// QueueingStrategy is the admission order policy of a ClusterQueue.
// +kubebuilder:validation:Enum=StrictFIFO;BestEffortFIFO
type QueueingStrategy string

const (
	// StrictFIFO admits in order; a head that does not fit blocks the queue.
	StrictFIFO QueueingStrategy = "StrictFIFO"
	// BestEffortFIFO admits in order but skips workloads that do not fit.
	BestEffortFIFO QueueingStrategy = "BestEffortFIFO"
)

// FlavorFungibilityPolicy says whether the flavor search stops at a flavor
// that needs borrowing or preemption.
// +kubebuilder:validation:Enum=MayStopSearch;TryNextFlavor
type FlavorFungibilityPolicy string

const (
	// MayStopSearch takes the current flavor.
	MayStopSearch FlavorFungibilityPolicy = "MayStopSearch"
	// TryNextFlavor keeps looking for a flavor that fits better.
	TryNextFlavor FlavorFungibilityPolicy = "TryNextFlavor"
)

// FlavorFungibilityPreference breaks ties between flavors that all need
// borrowing or preemption.
// +kubebuilder:validation:Enum=BorrowingOverPreemption;PreemptionOverBorrowing
type FlavorFungibilityPreference string

const (
	// BorrowingOverPreemption prefers a flavor where the workload borrows.
	BorrowingOverPreemption FlavorFungibilityPreference = "BorrowingOverPreemption"
	// PreemptionOverBorrowing prefers a flavor where the workload preempts.
	PreemptionOverBorrowing FlavorFungibilityPreference = "PreemptionOverBorrowing"
)

// FlavorFungibility decides how flavors are searched.
// +kubebuilder:validation:XValidation:rule="!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && self.whenCanPreempt == 'TryNextFlavor')",message="preference is only allowed when whenCanBorrow and whenCanPreempt are both TryNextFlavor"
type FlavorFungibility struct {
	// whenCanBorrow applies when the workload fits the flavor only by borrowing.
	// +kubebuilder:default=MayStopSearch
	// +optional
	WhenCanBorrow FlavorFungibilityPolicy `json:"whenCanBorrow,omitempty"`

	// whenCanPreempt applies when the workload fits the flavor only by preempting.
	// +kubebuilder:default=TryNextFlavor
	// +optional
	WhenCanPreempt FlavorFungibilityPolicy `json:"whenCanPreempt,omitempty"`

	// preference chooses among flavors that all need borrowing or preemption.
	// Unset behaves as BorrowingOverPreemption.
	// +optional
	Preference *FlavorFungibilityPreference `json:"preference,omitempty"`
}

// PreemptionPolicy names which workloads may be preempted.
type PreemptionPolicy string

const (
	// PreemptionPolicyNever never preempts.
	PreemptionPolicyNever PreemptionPolicy = "Never"
	// PreemptionPolicyAny preempts regardless of priority.
	PreemptionPolicyAny PreemptionPolicy = "Any"
	// PreemptionPolicyLowerPriority preempts workloads of lower priority.
	PreemptionPolicyLowerPriority PreemptionPolicy = "LowerPriority"
	// PreemptionPolicyLowerOrNewerEqualPriority also preempts workloads of equal
	// priority that were queued later.
	PreemptionPolicyLowerOrNewerEqualPriority PreemptionPolicy = "LowerOrNewerEqualPriority"
)

// BorrowWithinCohortPolicy names which workloads a borrowing workload may preempt.
// +kubebuilder:validation:Enum=Never;LowerPriority
type BorrowWithinCohortPolicy string

const (
	// BorrowWithinCohortPolicyNever forbids preemption while borrowing.
	BorrowWithinCohortPolicyNever BorrowWithinCohortPolicy = "Never"
	// BorrowWithinCohortPolicyLowerPriority allows preempting lower priorities while borrowing.
	BorrowWithinCohortPolicyLowerPriority BorrowWithinCohortPolicy = "LowerPriority"
)

// ClusterQueuePreemption sets the preemption policies of a ClusterQueue.
// +kubebuilder:validation:XValidation:rule="self.reclaimWithinCohort != 'Never' || !has(self.borrowWithinCohort) || self.borrowWithinCohort.policy == 'Never'",message="borrowWithinCohort.policy must be Never when reclaimWithinCohort is Never"
type ClusterQueuePreemption struct {
	// reclaimWithinCohort says whether a workload may preempt workloads of
	// other queues in the cohort that use this queue's nominal quota.
	// +kubebuilder:default=Never
	// +kubebuilder:validation:Enum=Never;LowerPriority;Any
	// +optional
	ReclaimWithinCohort PreemptionPolicy `json:"reclaimWithinCohort,omitempty"`

	// borrowWithinCohort says whether a workload that needs to borrow may
	// preempt workloads of other queues in the cohort.
	// +kubebuilder:default={}
	// +optional
	BorrowWithinCohort *BorrowWithinCohort `json:"borrowWithinCohort,omitempty"`

	// withinClusterQueue says whether a workload may preempt workloads of its
	// own queue.
	// +kubebuilder:default=Never
	// +kubebuilder:validation:Enum=Never;LowerPriority;LowerOrNewerEqualPriority
	// +optional
	WithinClusterQueue PreemptionPolicy `json:"withinClusterQueue,omitempty"`
}

// BorrowWithinCohort configures preemption by workloads that borrow.
type BorrowWithinCohort struct {
	// policy says which workloads may be preempted.
	// +kubebuilder:default=Never
	// +optional
	Policy BorrowWithinCohortPolicy `json:"policy,omitempty"`

	// maxPriorityThreshold, when set, protects workloads above this priority
	// from preemption by a borrowing workload.
	// +optional
	MaxPriorityThreshold *int32 `json:"maxPriorityThreshold,omitempty"`
}

// AdmissionChecksStrategy lists the admission checks of a ClusterQueue.
type AdmissionChecksStrategy struct {
	// admissionChecks lists the checks and the flavors they apply to.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	AdmissionChecks []AdmissionCheckStrategyRule `json:"admissionChecks"`
}

// AdmissionCheckStrategyRule binds one admission check to flavors.
type AdmissionCheckStrategyRule struct {
	// name of the AdmissionCheck.
	// +required
	Name AdmissionCheckReference `json:"name"`

	// onFlavors restricts the check to workloads assigned one of these
	// flavors. Empty means every workload.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	OnFlavors []ResourceFlavorReference `json:"onFlavors,omitempty"`
}

// AdmissionMode selects how LocalQueues of a ClusterQueue share admissions.
// +kubebuilder:validation:Enum=UsageBasedAdmissionFairSharing;NoAdmissionFairSharing
type AdmissionMode string

const (
	// UsageBasedAdmissionFairSharing orders by each LocalQueue's recent usage.
	UsageBasedAdmissionFairSharing AdmissionMode = "UsageBasedAdmissionFairSharing"
	// NoAdmissionFairSharing orders without regard to LocalQueue usage.
	NoAdmissionFairSharing AdmissionMode = "NoAdmissionFairSharing"
)

// AdmissionScope configures admission fair sharing.
type AdmissionScope struct {
	// admissionMode selects the mode.
	// +required
	AdmissionMode AdmissionMode `json:"admissionMode"`
}

// ConcurrentAdmissionMigrationMode says how a workload moves to a preferred flavor.
// +kubebuilder:validation:Enum=TryPreferredFlavors;RetainFirstAdmission
// +kubebuilder:validation:MaxLength=253
type ConcurrentAdmissionMigrationMode string

const (
	// TryPreferredFlavors keeps trying flavors earlier in the list.
	TryPreferredFlavors ConcurrentAdmissionMigrationMode = "TryPreferredFlavors"
	// RetainFirstAdmission keeps the first admission obtained.
	RetainFirstAdmission ConcurrentAdmissionMigrationMode = "RetainFirstAdmission"
)

// ConcurrentAdmissionPolicy configures concurrent admission.
type ConcurrentAdmissionPolicy struct {
	// migration says how the workload moves between flavors.
	// +required
	Migration ConcurrentAdmissionMigration `json:"migration"`
}

// ConcurrentAdmissionMigration configures flavor migration.
type ConcurrentAdmissionMigration struct {
	// mode of migration.
	// +required
	Mode ConcurrentAdmissionMigrationMode `json:"mode"`

	// constraints limit the migration.
	// +optional
	Constraints *ConcurrentAdmissionMigrationConstraints `json:"constraints,omitempty"`
}

// ConcurrentAdmissionMigrationConstraints limit flavor migration.
type ConcurrentAdmissionMigrationConstraints struct {
	// lastAcceptableFlavorName is the last flavor, in queue order, that a
	// migration may target.
	// +optional
	LastAcceptableFlavorName *ResourceFlavorReference `json:"lastAcceptableFlavorName,omitempty"`
}

// ClusterQueueStatus reports the observed state of a ClusterQueue.
type ClusterQueueStatus struct {
	// conditions hold the latest observations; the Active condition tells
	// whether the queue can admit workloads.
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// flavorsReservation is the quota reserved by workloads that hold a
	// reservation, admitted or not, per flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsReservation []FlavorUsage `json:"flavorsReservation,omitempty"`

	// flavorsUsage is the quota used by admitted workloads, per flavor.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +optional
	FlavorsUsage []FlavorUsage `json:"flavorsUsage,omitempty"`

	// pendingWorkloads counts workloads waiting for admission.
	// +optional
	PendingWorkloads int32 `json:"pendingWorkloads"`

	// reservingWorkloads counts workloads holding a quota reservation.
	// +optional
	ReservingWorkloads int32 `json:"reservingWorkloads"`

	// admittedWorkloads counts admitted workloads that have not finished.
	// +optional
	AdmittedWorkloads int32 `json:"admittedWorkloads"`

	// fairSharing reports the queue's fair-sharing state.
	// +optional
	FairSharing *FairSharingStatus `json:"fairSharing,omitempty"`
}

// ClusterQueue condition types and reasons.
const (
	// ClusterQueueActive tells whether the queue can admit workloads.
	ClusterQueueActive = "Active"
)

// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName={cq}
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cohort",JSONPath=".spec.cohortName",type=string,description="Cohort of the queue"
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
