package validation

import (
	"fmt"
	"slices"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// maxConcurrentAdmissionFlavors bounds the flavors of a queue with a
// concurrent admission policy (one variant workload per flavor).
const maxConcurrentAdmissionFlavors = 16

// ValidateClusterQueue checks a ClusterQueue being created.
func ValidateClusterQueue(cq *kueue.ClusterQueue) field.ErrorList {
	return validateClusterQueueSpec(&cq.Spec, nil)
}

// ValidateClusterQueueUpdate checks an update of a ClusterQueue. The spec is
// checked as on creation when it changes, except that admission check rules
// may keep onFlavors entries that were already there; concurrentAdmissionPolicy
// cannot change.
func ValidateClusterQueueUpdate(oldCQ, newCQ *kueue.ClusterQueue) field.ErrorList {
	if semantic.DeepEqual(oldCQ.Spec, newCQ.Spec) {
		return nil
	}
	errs := validateClusterQueueSpec(&newCQ.Spec, &oldCQ.Spec)
	if !semantic.DeepEqual(oldCQ.Spec.ConcurrentAdmissionPolicy, newCQ.Spec.ConcurrentAdmissionPolicy) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "concurrentAdmissionPolicy"),
			"cannot be added, changed or removed after the ClusterQueue is created"))
	}
	return errs
}

// validateClusterQueueSpec checks the spec; old is the previous spec on
// update, nil on creation.
func validateClusterQueueSpec(spec, old *kueue.ClusterQueueSpec) field.ErrorList {
	path := field.NewPath("spec")
	owner := quotaOwner{limitsAllowed: spec.CohortName != "", limitsNeed: "spec.cohortName", lendingWithinNominal: true}
	errs := validateResourceGroups(spec.ResourceGroups, owner, path.Child("resourceGroups"))
	if spec.NamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.NamespaceSelector,
			metav1validation.LabelSelectorValidationOptions{}, path.Child("namespaceSelector"))...)
	}
	errs = append(errs, validateFairSharing(spec.FairSharing, path.Child("fairSharing"))...)
	errs = append(errs, validateCheckStrategy(spec, old, path.Child("admissionChecksStrategy"))...)
	errs = append(errs, validateConcurrentAdmission(spec, path.Child("concurrentAdmissionPolicy"))...)
	return errs
}

// validateCheckStrategy requires every onFlavors entry to be a flavor of the
// queue. On update, entries the rule already had are tolerated, so that a
// queue stored with a stale entry can still be edited. A queue without any
// quota yet is a placeholder whose flavors come later (Kueue's own
// minimal-cq example is one), so it is not checked.
func validateCheckStrategy(spec, old *kueue.ClusterQueueSpec, path *field.Path) field.ErrorList {
	flavors := flavorNames(spec.ResourceGroups)
	if spec.AdmissionChecksStrategy == nil || len(flavors) == 0 {
		return nil
	}
	var errs field.ErrorList
	for i, rule := range spec.AdmissionChecksStrategy.AdmissionChecks {
		previous := oldOnFlavors(old, rule.Name)
		for j, f := range rule.OnFlavors {
			if flavors[f] || slices.Contains(previous, f) {
				continue
			}
			errs = append(errs, field.Invalid(path.Child("admissionChecks").Index(i).Child("onFlavors").Index(j), f,
				"must name a flavor listed in spec.resourceGroups"))
		}
	}
	return errs
}

// oldOnFlavors returns the onFlavors of the rule of that check in the old
// spec.
func oldOnFlavors(old *kueue.ClusterQueueSpec, check kueue.AdmissionCheckReference) []kueue.ResourceFlavorReference {
	if old == nil || old.AdmissionChecksStrategy == nil {
		return nil
	}
	for _, rule := range old.AdmissionChecksStrategy.AdmissionChecks {
		if rule.Name == check {
			return rule.OnFlavors
		}
	}
	return nil
}

// validateConcurrentAdmission checks that a concurrent admission policy fits
// the queue: one resource group of at most 16 flavors, not StrictFIFO,
// constraints only when migrating to preferred flavors, and a last
// acceptable flavor that the queue has.
func validateConcurrentAdmission(spec *kueue.ClusterQueueSpec, path *field.Path) field.ErrorList {
	policy := spec.ConcurrentAdmissionPolicy
	if policy == nil {
		return nil
	}
	var errs field.ErrorList
	groups := field.NewPath("spec", "resourceGroups")
	switch {
	case len(spec.ResourceGroups) != 1:
		errs = append(errs, field.Invalid(groups, len(spec.ResourceGroups),
			"a queue with a concurrentAdmissionPolicy needs exactly one resource group"))
	case len(spec.ResourceGroups[0].Flavors) > maxConcurrentAdmissionFlavors:
		errs = append(errs, field.TooMany(groups.Index(0).Child("flavors"), len(spec.ResourceGroups[0].Flavors), maxConcurrentAdmissionFlavors))
	}
	if spec.QueueingStrategy == kueue.StrictFIFO {
		errs = append(errs, field.Invalid(field.NewPath("spec", "queueingStrategy"), spec.QueueingStrategy,
			"StrictFIFO cannot be used with a concurrentAdmissionPolicy"))
	}
	cons := policy.Migration.Constraints
	if cons == nil {
		return errs
	}
	consPath := path.Child("migration", "constraints")
	if policy.Migration.Mode != kueue.TryPreferredFlavors {
		errs = append(errs, field.Forbidden(consPath, fmt.Sprintf("may only be set when migration.mode is %s", kueue.TryPreferredFlavors)))
	}
	if last := cons.LastAcceptableFlavorName; last != nil && !flavorNames(spec.ResourceGroups)[*last] {
		errs = append(errs, field.Invalid(consPath.Child("lastAcceptableFlavorName"), *last, "must name a flavor listed in spec.resourceGroups"))
	}
	return errs
}
