package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ValidateCohort checks a Cohort being created: its quota table (limits only
// with a parent; a cohort's lendingLimit may exceed its nominalQuota, since
// it also lends what its members hold) and its fair-sharing weight.
func ValidateCohort(c *kueue.Cohort) field.ErrorList {
	path := field.NewPath("spec")
	owner := quotaOwner{limitsAllowed: c.Spec.ParentName != "", limitsNeed: "spec.parentName"}
	errs := validateResourceGroups(c.Spec.ResourceGroups, owner, path.Child("resourceGroups"))
	return append(errs, validateFairSharing(c.Spec.FairSharing, path.Child("fairSharing"))...)
}

// ValidateCohortUpdate checks an update of a Cohort: the spec is checked as
// on creation when it changes.
func ValidateCohortUpdate(oldC, newC *kueue.Cohort) field.ErrorList {
	if semantic.DeepEqual(oldC.Spec, newC.Spec) {
		return nil
	}
	return ValidateCohort(newC)
}
