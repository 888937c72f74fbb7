package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceInUseFinalizerName is set on ClusterQueues, ResourceFlavors,
// AdmissionChecks and job-owned Workloads while something still depends on them.
const ResourceInUseFinalizerName = "kueue.x-k8s.io/resource-in-use"

// DefaultPodSetName is the name given to a PodSet that does not name itself.
const DefaultPodSetName PodSetReference = "main"

// ClusterQueueReference is the name of a ClusterQueue.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type ClusterQueueReference string

// CohortReference is the name of a Cohort.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type CohortReference string

// LocalQueueName is the name of a LocalQueue in the namespace of the object
// that refers to it.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type LocalQueueName string

// ResourceFlavorReference is the name of a ResourceFlavor.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type ResourceFlavorReference string

// TopologyReference is the name of a Topology.
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
type TopologyReference string

// PodSetReference is the name of a PodSet inside a Workload.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern="^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
type PodSetReference string

// AdmissionCheckReference is the name of an AdmissionCheck.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=316
type AdmissionCheckReference string

// WorkloadPriorityClassReference is the name of a WorkloadPriorityClass.
type WorkloadPriorityClassReference string

// StopPolicy tells whether a queue keeps admitting and running work.
// +kubebuilder:validation:Enum=None;Hold;HoldAndDrain
type StopPolicy string

const (
	// None lets the queue work normally.
	None StopPolicy = "None"
	// Hold stops new admissions; admitted workloads keep running.
	Hold StopPolicy = "Hold"
	// HoldAndDrain stops new admissions and evicts admitted workloads.
	HoldAndDrain StopPolicy = "HoldAndDrain"
)

// ResourceGroup lists resources whose quotas are assigned together: a PodSet
// gets one flavor for all the covered resources it requests.
// +kubebuilder:validation:XValidation:rule="self.flavors.all(f, size(f.resources) == size(self.coveredResources))",message="each flavor must list exactly one quota per covered resource"
type ResourceGroup struct {
	// coveredResources names the resources this group provides quota for.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	CoveredResources []corev1.ResourceName `json:"coveredResources"`

	// flavors are tried in this order when assigning a flavor to a PodSet.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Flavors []FlavorQuotas `json:"flavors"`
}

// FlavorQuotas holds the quotas of one flavor for the resources of a group.
type FlavorQuotas struct {
	// name of the ResourceFlavor. A flavor that does not exist makes the
	// ClusterQueue inactive.
	// +required
	Name ResourceFlavorReference `json:"name"`

	// resources gives one quota per covered resource, in the order of
	// coveredResources.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Resources []ResourceQuota `json:"resources"`
}

// ResourceQuota is the quota of one resource in one flavor.
// Kueue rejects negative amounts in its webhook; Kuota also rejects them here,
// so the API server enforces it even without the webhook.
// +kubebuilder:validation:XValidation:rule="type(self.nominalQuota) == string ? !self.nominalQuota.startsWith('-') : self.nominalQuota >= 0",message="nominalQuota must not be negative",fieldPath=".nominalQuota"
// +kubebuilder:validation:XValidation:rule="!has(self.borrowingLimit) || (type(self.borrowingLimit) == string ? !self.borrowingLimit.startsWith('-') : self.borrowingLimit >= 0)",message="borrowingLimit must not be negative",fieldPath=".borrowingLimit"
// +kubebuilder:validation:XValidation:rule="!has(self.lendingLimit) || (type(self.lendingLimit) == string ? !self.lendingLimit.startsWith('-') : self.lendingLimit >= 0)",message="lendingLimit must not be negative",fieldPath=".lendingLimit"
type ResourceQuota struct {
	// name of the resource, such as cpu, memory, nvidia.com/gpu or pods.
	// +required
	Name corev1.ResourceName `json:"name"`

	// nominalQuota is the amount guaranteed to this queue (or cohort). Unused
	// nominal quota may be lent to others in the cohort.
	// +required
	NominalQuota resource.Quantity `json:"nominalQuota"`

	// borrowingLimit caps how much more than nominalQuota may be borrowed from
	// the cohort. Unset means no cap. Only allowed when the owner is in a cohort.
	// +optional
	BorrowingLimit *resource.Quantity `json:"borrowingLimit,omitempty"`

	// lendingLimit caps how much of nominalQuota others in the cohort may use.
	// Unset means all of it may be lent. Only allowed when the owner is in a cohort.
	// +optional
	LendingLimit *resource.Quantity `json:"lendingLimit,omitempty"`
}

// FairSharing holds fair-sharing settings of a queue or cohort.
type FairSharing struct {
	// weight scales this member's share relative to its siblings: a higher
	// weight lets it use more before it counts as over its share. Zero means it
	// only gets what nobody else wants.
	// +kubebuilder:default=1
	// +optional
	Weight *resource.Quantity `json:"weight,omitempty"`
}

// FairSharingStatus reports the fair-sharing state of a queue or cohort.
type FairSharingStatus struct {
	// weightedShare is the largest ratio, over resources, of usage above
	// nominal quota to lendable capacity, divided by the weight and scaled by
	// 1000. Zero means the member uses no more than its nominal quota.
	// +required
	WeightedShare int64 `json:"weightedShare"`
}

// FlavorUsage reports usage of the resources of one flavor.
type FlavorUsage struct {
	// name of the flavor.
	// +required
	Name ResourceFlavorReference `json:"name"`

	// resources lists the usage per resource.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Resources []ResourceUsage `json:"resources"`
}

// ResourceUsage reports usage of one resource.
type ResourceUsage struct {
	// name of the resource.
	// +required
	Name corev1.ResourceName `json:"name"`

	// total is the amount in use, borrowed amounts included.
	// +optional
	Total resource.Quantity `json:"total,omitempty"`

	// borrowed is the part of total above the nominal quota.
	// +optional
	Borrowed resource.Quantity `json:"borrowed,omitempty"`
}
