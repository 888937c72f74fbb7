package kubectl

import (
	"strings"
	"testing"
)

// FuzzBuildResourceGroups feeds the quota flags arbitrary text: parsing
// never panics, and what it accepts is a valid set of resource groups (each
// flavor lists its group's resources, in order; no resource in two groups).
func FuzzBuildResourceGroups(f *testing.F) {
	f.Add("alpha:cpu=9;memory=36Gi,beta:nvidia.com/gpu=4", "alpha:cpu=1;memory=4Gi", "beta:nvidia.com/gpu=2")
	f.Add("a:cpu=1", "", "a:memory=1")
	f.Add("a:cpu=1;memory=2,b:memory=1;cpu=2", "b:cpu=1e3;memory=1Ki", "")
	f.Fuzz(func(t *testing.T, nominal, borrowing, lending string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		groups, err := buildResourceGroups(split(nominal), split(borrowing), split(lending))
		if err != nil {
			if !strings.Contains(err.Error(), "--") && !strings.Contains(err.Error(), "quota flags") {
				t.Fatalf("error %q names no flag", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, g := range groups {
			for _, r := range g.CoveredResources {
				if seen[string(r)] {
					t.Fatalf("resource %s in two groups: %+v", r, groups)
				}
				seen[string(r)] = true
			}
			for _, fq := range g.Flavors {
				if len(fq.Resources) != len(g.CoveredResources) {
					t.Fatalf("flavor %s has %d resources, its group covers %d", fq.Name, len(fq.Resources), len(g.CoveredResources))
				}
				for i, r := range fq.Resources {
					if r.Name != g.CoveredResources[i] || r.NominalQuota.Sign() < 0 {
						t.Fatalf("flavor %s resource %d is %s (%s), want %s, not negative", fq.Name, i, r.Name, r.NominalQuota.String(), g.CoveredResources[i])
					}
				}
			}
		}
	})
}
