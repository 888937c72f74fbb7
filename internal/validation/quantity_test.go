package validation

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestDivisibleBy(t *testing.T) {
	cases := []struct {
		q    resource.Quantity
		n    int64
		want bool
	}{
		{q("3"), 3, true},
		{q("300m"), 3, true},
		{q("1"), 3, false},
		{q("1"), 1000, true},
		{q("1"), 1001, false},
		{q("3Gi"), 3, true},
		{q("10Ei"), 5, true},
		{q("1u"), 2, false},
		{q("2u"), 2, true},
		{q("0"), 7, true},
		{q("-6"), 4, true},
		{q("3e9"), 7, false},
		{q("7e999999999"), 7, true},
		{q("1e999999999"), 3, false},
	}
	for _, tc := range cases {
		if got := divisibleBy(tc.q, tc.n); got != tc.want {
			t.Errorf("divisibleBy(%s, %d) = %v, want %v", tc.q.String(), tc.n, got, tc.want)
		}
	}
}

func TestCompareQuantitiesAgreesWithCmp(t *testing.T) {
	values := []string{"0", "1n", "1m", "999m", "1", "1000m", "1.5", "-2", "-1n", "3Gi", "3221225472", "1e3", "1k", "1Ki", "1e15", "9e17", "1e18", "123456789012345678901234567"}
	for _, a := range values {
		for _, b := range values {
			qa := q(a)
			if got, want := compareQuantities(qa, q(b)), qa.Cmp(q(b)); got != want {
				t.Errorf("compareQuantities(%s, %s) = %d, Cmp says %d", a, b, got, want)
			}
		}
	}
}

// TestExtremeQuantitiesAreCheap: quantities with enormous exponents are
// legal syntax; validating them must not take the time Quantity.Cmp takes.
func TestExtremeQuantitiesAreCheap(t *testing.T) {
	start := time.Now()
	huge, tiny := q("1e999999999"), q("-1e999999999")
	if compareQuantities(huge, q("1")) != 1 || compareQuantities(tiny, q("1")) != -1 || compareQuantities(q("5"), huge) != -1 {
		t.Error("wrong order")
	}
	if semantic.DeepEqual(huge, q("1")) || !semantic.DeepEqual(huge, q("1e999999999")) {
		t.Error("wrong equality")
	}
	expectPaths(t, validateMagnitude(huge, field.NewPath("x")), "x")
	old := clusterQueue()
	updated := clusterQueue(func(cq *kueue.ClusterQueue) { cq.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = huge })
	expectPaths(t, ValidateClusterQueueUpdate(old, updated), "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestValidateMagnitude(t *testing.T) {
	for _, s := range []string{"1e30", "999999999999999999999999999999", "8Ei", "-1e30", "1n"} {
		expectPaths(t, validateMagnitude(q(s), field.NewPath("x")))
	}
	for _, s := range []string{"1e31", "1e40", "-1e31", "10000000000000000000000000000000"} {
		expectPaths(t, validateMagnitude(q(s), field.NewPath("x")), "x")
	}
	wl := workload(func(wl *kueue.Workload) {
		wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests["cpu"] = q("1e40")
	})
	expectPaths(t, ValidateWorkload(wl), "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]")
	c := cohort(func(c *kueue.Cohort) { c.Spec.FairSharing = &kueue.FairSharing{Weight: qp("1e40")} })
	expectPaths(t, ValidateCohort(c), "spec.fairSharing.weight")
}

// TestValidateAmountRefusesWhatCannotBeCounted: quotas, limits and
// requests beyond what Kuota's accounting holds (resources.MaxAmount in
// the resource's unit: 4Ei of memory, about 4.6e15 cpus) are refused with
// the field named and the limit given; up to the limit they are valid.
func TestValidateAmountRefusesWhatCannotBeCounted(t *testing.T) {
	const memQuota = "spec.resourceGroups[0].flavors[0].resources[1]"
	withMemory := func(nominal string, limits ...string) func(*kueue.ClusterQueue) {
		return func(cq *kueue.ClusterQueue) {
			cq.Spec.CohortName = "co"
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[1] = quota("memory", nominal, limits...)
		}
	}
	expectPaths(t, ValidateClusterQueue(clusterQueue(withMemory("4Ei", "4Ei", "4Ei"))))
	expectPaths(t, ValidateClusterQueue(clusterQueue(withMemory("5Pi"))))
	expectPaths(t, ValidateClusterQueue(clusterQueue(withMemory("5Ei"))), memQuota+".nominalQuota")
	expectPaths(t, ValidateClusterQueue(clusterQueue(withMemory("1Ei", "8Ei"))), memQuota+".borrowingLimit")
	expectPaths(t, ValidateClusterQueue(clusterQueue(withMemory("4Ei", "", "4097Pi"))), memQuota+".lendingLimit")
	errs := ValidateClusterQueue(clusterQueue(withMemory("5Ei")))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "at most 4Ei") {
		t.Errorf("the message should give the limit: %v", errs)
	}
	cpus := func(nominal string) func(*kueue.ClusterQueue) {
		return func(cq *kueue.ClusterQueue) {
			cq.Spec.ResourceGroups[0].Flavors[0].Resources[0] = quota("cpu", nominal)
		}
	}
	expectPaths(t, ValidateClusterQueue(clusterQueue(cpus("4e15"))))
	expectPaths(t, ValidateClusterQueue(clusterQueue(cpus("5e15"))), "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota")
	c := cohort(func(c *kueue.Cohort) { c.Spec.ResourceGroups[0].Flavors[0].Resources[1] = quota("memory", "6Ei") })
	expectPaths(t, ValidateCohort(c), memQuota+".nominalQuota")
	wl := workload(func(wl *kueue.Workload) {
		wl.Spec.PodSets[1].Template.Spec.Containers[0].Resources.Requests["memory"] = q("5Ei")
	})
	expectPaths(t, ValidateWorkload(wl), "spec.podSets[1].template.spec.containers[0].resources.requests[memory]")
}
