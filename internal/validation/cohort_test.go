package validation

import (
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestValidateCohort(t *testing.T) {
	rg := "spec.resourceGroups"
	cases := map[string]struct {
		mut  func(*kueue.Cohort)
		want []string
	}{
		"valid root": {mut: func(*kueue.Cohort) {}},
		"no quota":   {mut: func(c *kueue.Cohort) { c.Spec.ResourceGroups = nil }},
		"limits with a parent, lendingLimit above nominal": {mut: func(c *kueue.Cohort) {
			c.Spec.ParentName = "root"
			c.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "10", "5", "50")
		}},
		"borrowingLimit without a parent": {
			mut: func(c *kueue.Cohort) {
				c.Spec.ResourceGroups[1].Flavors[0].Resources[0] = quota("nvidia.com/gpu", "8", "2")
			},
			want: []string{rg + "[1].flavors[0].resources[0].borrowingLimit"},
		},
		"lendingLimit without a parent": {
			mut: func(c *kueue.Cohort) {
				c.Spec.ResourceGroups[1].Flavors[0].Resources[0] = quota("nvidia.com/gpu", "8", "", "2")
			},
			want: []string{rg + "[1].flavors[0].resources[0].lendingLimit"},
		},
		"flavor in two groups": {
			mut:  func(c *kueue.Cohort) { c.Spec.ResourceGroups[1].Flavors[0].Name = "b" },
			want: []string{rg + "[1].flavors[0].name"},
		},
		"quotas out of order": {
			mut:  func(c *kueue.Cohort) { c.Spec.ResourceGroups[0].Flavors[0].Resources[1].Name = "cpu" },
			want: []string{rg + "[0].flavors[0].resources[1].name"},
		},
		"negative fair-sharing weight": {
			mut:  func(c *kueue.Cohort) { c.Spec.FairSharing = &kueue.FairSharing{Weight: qp("-0.5")} },
			want: []string{"spec.fairSharing.weight"},
		},
		"fair-sharing weight": {
			mut: func(c *kueue.Cohort) { c.Spec.FairSharing = &kueue.FairSharing{Weight: qp("2.5")} },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			expectPaths(t, ValidateCohort(cohort(tc.mut)), tc.want...)
		})
	}
}

func TestValidateCohortUpdate(t *testing.T) {
	legacy := cohort(func(c *kueue.Cohort) { c.Spec.FairSharing = &kueue.FairSharing{Weight: qp("-1")} })
	t.Run("metadata-only update of an invalid stored cohort", func(t *testing.T) {
		updated := legacy.DeepCopy()
		updated.Labels = map[string]string{"a": "b"}
		expectPaths(t, ValidateCohortUpdate(legacy, updated))
	})
	t.Run("spec change is validated", func(t *testing.T) {
		updated := legacy.DeepCopy()
		updated.Spec.ParentName = "root"
		expectPaths(t, ValidateCohortUpdate(legacy, updated), "spec.fairSharing.weight")
	})
	t.Run("limits removed with the parent", func(t *testing.T) {
		old := cohort(func(c *kueue.Cohort) {
			c.Spec.ParentName = "root"
			c.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", "10", "5")
		})
		updated := old.DeepCopy()
		updated.Spec.ParentName = ""
		expectPaths(t, ValidateCohortUpdate(old, updated), "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit")
	})
}
