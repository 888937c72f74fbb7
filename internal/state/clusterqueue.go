// Package state is Kuota's in-memory picture of the cluster as the scheduler
// needs it: flavors, ClusterQueues, Cohorts (the quota tree), namespaces and
// the usage of admitted workloads. Controllers feed it with events; the
// scheduler takes an immutable Snapshot per cycle and assumes (or forgets)
// admissions. It is pure: no I/O, no globals, deterministic.
package state

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
)

// ResourceGroup is a group of resources assigned one flavor together.
type ResourceGroup struct {
	Resources []corev1.ResourceName
	Flavors   []kueue.ResourceFlavorReference
}

// Covers reports whether the group covers resource r.
func (g *ResourceGroup) Covers(r corev1.ResourceName) bool {
	for _, c := range g.Resources {
		if c == r {
			return true
		}
	}
	return false
}

// ClusterQueue is the scheduler's view of a ClusterQueue spec. It is
// immutable: an update replaces it.
type ClusterQueue struct {
	Name             kueue.ClusterQueueReference
	Cohort           kueue.CohortReference
	ResourceGroups   []ResourceGroup
	Quotas           hierarchy.Quotas
	QueueingStrategy kueue.QueueingStrategy
	// NamespaceSelector is nil when no namespace may use the queue.
	NamespaceSelector labels.Selector
	WhenCanBorrow     kueue.FlavorFungibilityPolicy
	WhenCanPreempt    kueue.FlavorFungibilityPolicy
	Preference        kueue.FlavorFungibilityPreference
	Preemption        Preemption
	StopPolicy        kueue.StopPolicy
	// FairWeight is the fair-sharing weight in milli-units (1000 = 1).
	FairWeight resources.Amount
	// FairAdmission is set when admissionScope asks for admission fair
	// sharing (internal/afs): its LocalQueues take turns by past usage.
	FairAdmission bool
	// AdmissionChecks names the checks that apply, per flavor ("" = all).
	AdmissionChecks []AdmissionCheckRule
	// Terminating is set once the ClusterQueue is being deleted: it admits
	// nothing new, but keeps its place in the cohort (its nominal quota and
	// its usage) until its last reservation is released.
	Terminating bool
	// AwaitingFinalizer is set by the manager while the live ClusterQueue
	// does not carry the resource-in-use finalizer yet; it admits nothing
	// meanwhile, so that no workload runs in a queue whose deletion would
	// not wait for it.
	AwaitingFinalizer bool
}

// Preemption holds a ClusterQueue's preemption policies with defaults applied.
type Preemption struct {
	WithinClusterQueue   kueue.PreemptionPolicy
	ReclaimWithinCohort  kueue.PreemptionPolicy
	BorrowWithinCohort   kueue.BorrowWithinCohortPolicy
	MaxPriorityThreshold *int32
}

// AdmissionCheckRule is one entry of admissionChecksStrategy.
type AdmissionCheckRule struct {
	Name      kueue.AdmissionCheckReference
	OnFlavors []kueue.ResourceFlavorReference
}

// GroupFor returns the resource group covering r, or nil.
func (cq *ClusterQueue) GroupFor(r corev1.ResourceName) *ResourceGroup {
	for i := range cq.ResourceGroups {
		if cq.ResourceGroups[i].Covers(r) {
			return &cq.ResourceGroups[i]
		}
	}
	return nil
}

// Flavors returns every flavor the queue lists, in order.
func (cq *ClusterQueue) Flavors() []kueue.ResourceFlavorReference {
	var out []kueue.ResourceFlavorReference
	for _, g := range cq.ResourceGroups {
		out = append(out, g.Flavors...)
	}
	return out
}

// NewClusterQueue converts an API ClusterQueue, applying Kueue's defaults
// for unset fields. It fails only on an invalid namespace selector.
func NewClusterQueue(obj *kueue.ClusterQueue) (*ClusterQueue, error) {
	spec := &obj.Spec
	cq := &ClusterQueue{
		Name:             kueue.ClusterQueueReference(obj.Name),
		Cohort:           spec.CohortName,
		QueueingStrategy: spec.QueueingStrategy,
		WhenCanBorrow:    kueue.MayStopSearch,
		WhenCanPreempt:   kueue.TryNextFlavor,
		Preference:       kueue.BorrowingOverPreemption,
		StopPolicy:       kueue.None,
		FairWeight:       resources.One,
		Quotas:           quotasOf(spec.ResourceGroups),
	}
	if cq.QueueingStrategy == "" {
		cq.QueueingStrategy = kueue.BestEffortFIFO
	}
	for _, g := range spec.ResourceGroups {
		rg := ResourceGroup{Resources: g.CoveredResources}
		for _, f := range g.Flavors {
			rg.Flavors = append(rg.Flavors, f.Name)
		}
		cq.ResourceGroups = append(cq.ResourceGroups, rg)
	}
	if spec.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(spec.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("clusterQueue %s: spec.namespaceSelector: %w", obj.Name, err)
		}
		cq.NamespaceSelector = sel
	}
	if ff := spec.FlavorFungibility; ff != nil {
		cq.WhenCanBorrow = orDefault(ff.WhenCanBorrow, kueue.MayStopSearch)
		cq.WhenCanPreempt = orDefault(ff.WhenCanPreempt, kueue.TryNextFlavor)
		if ff.Preference != nil {
			cq.Preference = *ff.Preference
		}
	}
	cq.Preemption = preemptionOf(spec.Preemption)
	cq.Terminating = !obj.DeletionTimestamp.IsZero()

	if spec.StopPolicy != nil && *spec.StopPolicy != "" {
		cq.StopPolicy = *spec.StopPolicy
	}
	if spec.FairSharing != nil && spec.FairSharing.Weight != nil {
		cq.FairWeight = resources.FromQuantity(*spec.FairSharing.Weight)
	}
	if s := spec.AdmissionScope; s != nil && s.AdmissionMode == kueue.UsageBasedAdmissionFairSharing {
		cq.FairAdmission = true
	}
	if s := spec.AdmissionChecksStrategy; s != nil {
		for _, r := range s.AdmissionChecks {
			cq.AdmissionChecks = append(cq.AdmissionChecks, AdmissionCheckRule{Name: r.Name, OnFlavors: r.OnFlavors})
		}
	}
	return cq, nil
}

func orDefault[T ~string](v, def T) T {
	if v == "" {
		return def
	}
	return v
}

func preemptionOf(p *kueue.ClusterQueuePreemption) Preemption {
	out := Preemption{
		WithinClusterQueue:  kueue.PreemptionPolicyNever,
		ReclaimWithinCohort: kueue.PreemptionPolicyNever,
		BorrowWithinCohort:  kueue.BorrowWithinCohortPolicyNever,
	}
	if p == nil {
		return out
	}
	out.WithinClusterQueue = orDefault(p.WithinClusterQueue, out.WithinClusterQueue)
	out.ReclaimWithinCohort = orDefault(p.ReclaimWithinCohort, out.ReclaimWithinCohort)
	if b := p.BorrowWithinCohort; b != nil {
		out.BorrowWithinCohort = orDefault(b.Policy, out.BorrowWithinCohort)
		out.MaxPriorityThreshold = b.MaxPriorityThreshold
	}
	return out
}

// quotasOf converts resource groups to per-(flavor, resource) quotas.
func quotasOf(groups []kueue.ResourceGroup) hierarchy.Quotas {
	out := hierarchy.Quotas{}
	for _, g := range groups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				q := hierarchy.NominalOnly(resources.FromQuantity(r.NominalQuota))
				if r.BorrowingLimit != nil {
					q.BorrowingLimit = resources.FromQuantity(*r.BorrowingLimit)
				}
				if r.LendingLimit != nil {
					q.LendingLimit = resources.FromQuantity(*r.LendingLimit)
				}
				out[resources.FlavorResource{Flavor: f.Name, Resource: r.Name}] = q
			}
		}
	}
	return out
}

// Cohort is the scheduler's view of a Cohort spec.
type Cohort struct {
	Name       kueue.CohortReference
	Parent     kueue.CohortReference
	Quotas     hierarchy.Quotas
	FairWeight resources.Amount
}

// NewCohort converts an API Cohort.
func NewCohort(obj *kueue.Cohort) *Cohort {
	c := &Cohort{
		Name:       kueue.CohortReference(obj.Name),
		Parent:     obj.Spec.ParentName,
		Quotas:     quotasOf(obj.Spec.ResourceGroups),
		FairWeight: resources.One,
	}
	if fs := obj.Spec.FairSharing; fs != nil && fs.Weight != nil {
		c.FairWeight = resources.FromQuantity(*fs.Weight)
	}
	return c
}

// Flavor is the scheduler's view of a ResourceFlavor.
type Flavor struct {
	Name         kueue.ResourceFlavorReference
	NodeLabels   map[string]string
	NodeTaints   []corev1.Taint
	Tolerations  []corev1.Toleration
	TopologyName kueue.TopologyReference
}

// NewFlavor converts an API ResourceFlavor.
func NewFlavor(obj *kueue.ResourceFlavor) *Flavor {
	f := &Flavor{
		Name:        kueue.ResourceFlavorReference(obj.Name),
		NodeLabels:  obj.Spec.NodeLabels,
		NodeTaints:  obj.Spec.NodeTaints,
		Tolerations: obj.Spec.Tolerations,
	}
	if obj.Spec.TopologyName != nil {
		f.TopologyName = *obj.Spec.TopologyName
	}
	return f
}
