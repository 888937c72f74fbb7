// Package state is Kuota's in-memory picture of the cluster as the scheduler
// needs it: flavors, ClusterQueues, Cohorts (the quota tree), namespaces and
// the usage of admitted workloads. Controllers feed it with events; the
// scheduler takes an immutable Snapshot per cycle and assumes (or forgets)
// admissions. It is pure: no I/O, no globals, deterministic.
package state

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

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
// for unset fields. It fails on an invalid namespace selector and on a
// quota too large to be counted (resources.FromQuantity); the webhook
// refuses both.
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
	}
	quotas, err := quotasOf(spec.ResourceGroups, field.NewPath("spec", "resourceGroups"))
	if err != nil {
		return nil, fmt.Errorf("clusterQueue %s: %w", obj.Name, err)
	}
	cq.Quotas = quotas
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
		cq.FairWeight = weightOf(*spec.FairSharing.Weight)
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

// quotasOf converts resource groups to per-(flavor, resource) quotas,
// failing with the path of the first quantity that cannot be counted.
func quotasOf(groups []kueue.ResourceGroup, path *field.Path) (hierarchy.Quotas, error) {
	out := hierarchy.Quotas{}
	for i, g := range groups {
		for j, f := range g.Flavors {
			for k, r := range f.Resources {
				rp := path.Index(i).Child("flavors").Index(j).Child("resources").Index(k)
				q, err := quotaOf(&r, rp)
				if err != nil {
					return nil, err
				}
				out[resources.FlavorResource{Flavor: f.Name, Resource: r.Name}] = q
			}
		}
	}
	return out, nil
}

// quotaOf converts one resource's quota; unset limits are Unlimited.
func quotaOf(r *kueue.ResourceQuota, path *field.Path) (hierarchy.Quota, error) {
	nominal, err := resources.FromQuantity(r.Name, r.NominalQuota)
	if err != nil {
		return hierarchy.Quota{}, fmt.Errorf("%s: %w", path.Child("nominalQuota"), err)
	}
	q := hierarchy.NominalOnly(nominal)
	if r.BorrowingLimit != nil {
		if q.BorrowingLimit, err = resources.FromQuantity(r.Name, *r.BorrowingLimit); err != nil {
			return hierarchy.Quota{}, fmt.Errorf("%s: %w", path.Child("borrowingLimit"), err)
		}
	}
	if r.LendingLimit != nil {
		if q.LendingLimit, err = resources.FromQuantity(r.Name, *r.LendingLimit); err != nil {
			return hierarchy.Quota{}, fmt.Errorf("%s: %w", path.Child("lendingLimit"), err)
		}
	}
	return q, nil
}

// weightOf converts a fair-sharing weight to milli-units (resources.One
// is 1). A weight beyond what an amount holds counts as the largest one:
// a weight is a ratio, so nothing overflows, the share only gets smaller.
func weightOf(q resource.Quantity) resources.Amount {
	if q.CmpInt64(resources.MaxAmount/resources.One) >= 0 {
		return resources.MaxAmount
	}
	return q.MilliValue()
}

// Cohort is the scheduler's view of a Cohort spec.
type Cohort struct {
	Name       kueue.CohortReference
	Parent     kueue.CohortReference
	Quotas     hierarchy.Quotas
	FairWeight resources.Amount
}

// NewCohort converts an API Cohort. It fails on a quota too large to be
// counted, which the webhook refuses.
func NewCohort(obj *kueue.Cohort) (*Cohort, error) {
	quotas, err := quotasOf(obj.Spec.ResourceGroups, field.NewPath("spec", "resourceGroups"))
	if err != nil {
		return nil, fmt.Errorf("cohort %s: %w", obj.Name, err)
	}
	c := &Cohort{
		Name:       kueue.CohortReference(obj.Name),
		Parent:     obj.Spec.ParentName,
		Quotas:     quotas,
		FairWeight: resources.One,
	}
	if fs := obj.Spec.FairSharing; fs != nil && fs.Weight != nil {
		c.FairWeight = weightOf(*fs.Weight)
	}
	return c, nil
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
