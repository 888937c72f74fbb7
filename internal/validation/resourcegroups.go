package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Limits on the size of the quota table of one ClusterQueue or Cohort.
const (
	maxFlavorsTotal         = 256
	maxCoveredResourceTotal = 256
	maxFlavorResourcePairs  = 512
)

// quotaOwner says what the resource groups of a ClusterQueue or Cohort may
// hold.
type quotaOwner struct {
	// limitsAllowed is true when the owner has somewhere to borrow from
	// and lend to (a cohort, or a parent cohort).
	limitsAllowed bool
	// limitsNeed names the field that allows limits, for messages.
	limitsNeed string
	// lendingWithinNominal requires lendingLimit <= nominalQuota.
	lendingWithinNominal bool
}

// validateResourceGroups checks the quota table: sizes, resource names, a
// resource or flavor in at most one group, quotas listed in the order of
// coveredResources, and the borrowing and lending limits.
func validateResourceGroups(groups []kueue.ResourceGroup, owner quotaOwner, path *field.Path) field.ErrorList {
	errs := validateQuotaTableSize(groups, path)
	seenResources := map[corev1.ResourceName]bool{}
	seenFlavors := map[kueue.ResourceFlavorReference]bool{}
	for i := range groups {
		g := &groups[i]
		gp := path.Index(i)
		for j, name := range g.CoveredResources {
			rp := gp.Child("coveredResources").Index(j)
			errs = append(errs, validateResourceName(name, rp)...)
			if seenResources[name] {
				errs = append(errs, field.Duplicate(rp, name))
			}
			seenResources[name] = true
		}
		for k := range g.Flavors {
			fq := &g.Flavors[k]
			fp := gp.Child("flavors").Index(k)
			if seenFlavors[fq.Name] {
				errs = append(errs, field.Duplicate(fp.Child("name"), fq.Name))
			}
			seenFlavors[fq.Name] = true
			errs = append(errs, validateFlavorQuotas(fq, g.CoveredResources, owner, fp)...)
		}
	}
	return errs
}

// validateQuotaTableSize bounds the number of flavors and resources.
func validateQuotaTableSize(groups []kueue.ResourceGroup, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	flavors, resources := 0, 0
	for i, g := range groups {
		flavors += len(g.Flavors)
		resources += len(g.CoveredResources)
		if pairs := len(g.Flavors) * len(g.CoveredResources); pairs > maxFlavorResourcePairs {
			errs = append(errs, field.Forbidden(path.Index(i), fmt.Sprintf(
				"a resource group may hold at most %d flavor and resource combinations, this one has %d flavors x %d resources",
				maxFlavorResourcePairs, len(g.Flavors), len(g.CoveredResources))))
		}
	}
	if flavors > maxFlavorsTotal {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf(
			"at most %d flavors may be listed across all resource groups, found %d", maxFlavorsTotal, flavors)))
	}
	if resources > maxCoveredResourceTotal {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf(
			"at most %d covered resources may be listed across all resource groups, found %d", maxCoveredResourceTotal, resources)))
	}
	return errs
}

func validateResourceName(name corev1.ResourceName, path *field.Path) field.ErrorList {
	if msgs := utilvalidation.IsQualifiedName(string(name)); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, name, "not a valid resource name: "+strings.Join(msgs, "; "))}
	}
	return nil
}

// validateFlavorQuotas checks the quotas of one flavor against the covered
// resources of its group.
func validateFlavorQuotas(fq *kueue.FlavorQuotas, covered []corev1.ResourceName, owner quotaOwner, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for r := range fq.Resources {
		q := &fq.Resources[r]
		qp := path.Child("resources").Index(r)
		if r < len(covered) && q.Name != covered[r] {
			errs = append(errs, field.Invalid(qp.Child("name"), q.Name, fmt.Sprintf(
				"must be %q: a flavor lists its quotas in the order of coveredResources", covered[r])))
		}
		errs = append(errs, validateLimits(q, owner, qp)...)
	}
	return errs
}

// validateLimits checks the size of one quota and its borrowing and lending
// limits: each within what Kuota can count (validateAmount).
func validateLimits(q *kueue.ResourceQuota, owner quotaOwner, path *field.Path) field.ErrorList {
	errs := validateAmount(q.Name, q.NominalQuota, path.Child("nominalQuota"))
	if q.BorrowingLimit != nil {
		errs = append(errs, validateAmount(q.Name, *q.BorrowingLimit, path.Child("borrowingLimit"))...)
	}
	if q.LendingLimit != nil {
		errs = append(errs, validateAmount(q.Name, *q.LendingLimit, path.Child("lendingLimit"))...)
	}
	if len(errs) > 0 {
		return errs
	}
	if !owner.limitsAllowed {
		if q.BorrowingLimit != nil {
			errs = append(errs, field.Forbidden(path.Child("borrowingLimit"), "may only be set when "+owner.limitsNeed+" is set"))
		}
		if q.LendingLimit != nil {
			errs = append(errs, field.Forbidden(path.Child("lendingLimit"), "may only be set when "+owner.limitsNeed+" is set"))
		}
	}
	if owner.lendingWithinNominal && q.LendingLimit != nil && compareQuantities(*q.LendingLimit, q.NominalQuota) > 0 {
		errs = append(errs, field.Invalid(path.Child("lendingLimit"), q.LendingLimit.String(),
			fmt.Sprintf("must not exceed nominalQuota (%s)", q.NominalQuota.String())))
	}
	return errs
}

// flavorNames lists the flavors of the quota table.
func flavorNames(groups []kueue.ResourceGroup) map[kueue.ResourceFlavorReference]bool {
	out := map[kueue.ResourceFlavorReference]bool{}
	for _, g := range groups {
		for _, f := range g.Flavors {
			out[f.Name] = true
		}
	}
	return out
}
