package kubectl

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Parsing of create clusterqueue's --nominal-quota, --borrowing-limit and
// --lending-limit: "flavor:resource=quantity;resource=quantity,flavor2:...".
// Quotas of one flavor from the three flags merge into one FlavorQuotas;
// flavors covering the same set of resources share a resource group.

// quotaKind says which field of a ResourceQuota a flag sets.
type quotaKind string

const (
	nominalQuotaFlag   quotaKind = "nominal-quota"
	borrowingLimitFlag quotaKind = "borrowing-limit"
	lendingLimitFlag   quotaKind = "lending-limit"
)

// flavorSpec is one "flavor:resource=quantity;..." entry of a flag.
type flavorSpec struct {
	flavor    string
	resources []corev1.ResourceName
	amounts   []resource.Quantity
}

func parseFlavorSpec(flag quotaKind, s string) (flavorSpec, error) {
	name, list, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.TrimSpace(list) == "" {
		return flavorSpec{}, fmt.Errorf("invalid --%s value %q: want FLAVOR:RESOURCE=QUANTITY[;RESOURCE=QUANTITY...]", flag, s)
	}
	spec := flavorSpec{flavor: name}
	for _, item := range strings.Split(list, ";") {
		res, qty, ok := strings.Cut(item, "=")
		res, qty = strings.TrimSpace(res), strings.TrimSpace(qty)
		if !ok || res == "" || qty == "" {
			return flavorSpec{}, fmt.Errorf("invalid --%s value %q: resource %q must be RESOURCE=QUANTITY", flag, s, item)
		}
		q, err := resource.ParseQuantity(qty)
		if err != nil {
			return flavorSpec{}, fmt.Errorf("invalid --%s value %q: quantity of %s: %w", flag, s, res, err)
		}
		if q.Sign() < 0 {
			return flavorSpec{}, fmt.Errorf("invalid --%s value %q: quantity of %s must not be negative", flag, s, res)
		}
		if slices.Contains(spec.resources, corev1.ResourceName(res)) {
			return flavorSpec{}, fmt.Errorf("invalid --%s value %q: resource %s is given twice", flag, s, res)
		}
		spec.resources = append(spec.resources, corev1.ResourceName(res))
		spec.amounts = append(spec.amounts, q)
	}
	return spec, nil
}

// buildResourceGroups turns the three flags' values into resource groups.
func buildResourceGroups(nominal, borrowing, lending []string) ([]kueue.ResourceGroup, error) {
	var flavors []*kueue.FlavorQuotas
	byName := map[string]*kueue.FlavorQuotas{}
	for _, f := range []struct {
		kind   quotaKind
		values []string
	}{{nominalQuotaFlag, nominal}, {borrowingLimitFlag, borrowing}, {lendingLimitFlag, lending}} {
		for _, v := range f.values {
			spec, err := parseFlavorSpec(f.kind, v)
			if err != nil {
				return nil, err
			}
			fq := byName[spec.flavor]
			if fq == nil {
				fq = &kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(spec.flavor)}
				for _, r := range spec.resources {
					fq.Resources = append(fq.Resources, kueue.ResourceQuota{Name: r, NominalQuota: resource.MustParse("0")})
				}
				byName[spec.flavor] = fq
				flavors = append(flavors, fq)
			}
			if err := setQuotas(fq, f.kind, spec); err != nil {
				return nil, err
			}
		}
	}
	return groupFlavors(flavors)
}

// setQuotas sets the kind's amounts of spec in fq; spec must list the
// resources fq already has.
func setQuotas(fq *kueue.FlavorQuotas, kind quotaKind, spec flavorSpec) error {
	if len(spec.resources) != len(fq.Resources) {
		return fmt.Errorf("invalid --%s value for flavor %s: it must list the same resources (%s) in every flag", kind, spec.flavor, resourceList(fq))
	}
	for i, r := range spec.resources {
		j := slices.IndexFunc(fq.Resources, func(q kueue.ResourceQuota) bool { return q.Name == r })
		if j < 0 {
			return fmt.Errorf("invalid --%s value for flavor %s: resource %s is not among %s, given for this flavor in another flag", kind, spec.flavor, r, resourceList(fq))
		}
		q := spec.amounts[i]
		switch kind {
		case nominalQuotaFlag:
			fq.Resources[j].NominalQuota = q
		case borrowingLimitFlag:
			fq.Resources[j].BorrowingLimit = &q
		case lendingLimitFlag:
			fq.Resources[j].LendingLimit = &q
		}
	}
	return nil
}

func resourceList(fq *kueue.FlavorQuotas) string {
	names := make([]string, len(fq.Resources))
	for i, r := range fq.Resources {
		names[i] = string(r.Name)
	}
	return strings.Join(names, ";")
}

// groupFlavors puts flavors covering the same resources in one group; a
// resource may not be covered by two groups.
func groupFlavors(flavors []*kueue.FlavorQuotas) ([]kueue.ResourceGroup, error) {
	var groups []kueue.ResourceGroup
	groupOf := map[string]int{}    // sorted resource list -> group index
	ownerOf := map[string]string{} // resource -> flavor that brought its group
	for _, fq := range flavors {
		var names []string
		for _, r := range fq.Resources {
			names = append(names, string(r.Name))
		}
		sorted := slices.Clone(names)
		sort.Strings(sorted)
		key := strings.Join(sorted, ";")
		if i, ok := groupOf[key]; ok {
			groups[i].Flavors = append(groups[i].Flavors, inOrder(*fq, groups[i].CoveredResources))
			continue
		}
		for _, n := range names {
			if other, taken := ownerOf[n]; taken {
				return nil, fmt.Errorf("invalid quota flags: resource %s of flavor %s is already covered, with other resources, by flavor %s; flavors sharing a resource must list the same resources", n, fq.Name, other)
			}
			ownerOf[n] = string(fq.Name)
		}
		groupOf[key] = len(groups)
		covered := make([]corev1.ResourceName, len(fq.Resources))
		for i, r := range fq.Resources {
			covered[i] = r.Name
		}
		groups = append(groups, kueue.ResourceGroup{CoveredResources: covered, Flavors: []kueue.FlavorQuotas{*fq}})
	}
	return groups, nil
}

// inOrder returns fq with its resources in the order of covered.
func inOrder(fq kueue.FlavorQuotas, covered []corev1.ResourceName) kueue.FlavorQuotas {
	out := fq
	out.Resources = make([]kueue.ResourceQuota, 0, len(covered))
	for _, c := range covered {
		for _, r := range fq.Resources {
			if r.Name == c {
				out.Resources = append(out.Resources, r)
			}
		}
	}
	return out
}
