package kubectl

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func TestBuildResourceGroups(t *testing.T) {
	got, err := buildResourceGroups(
		[]string{"alpha:cpu=9;memory=36Gi", "beta:memory=8Gi;cpu=2", "gpu:nvidia.com/gpu=4"},
		[]string{"alpha:cpu=1;memory=4Gi"},
		[]string{"gpu:nvidia.com/gpu=2"})
	if err != nil {
		t.Fatal(err)
	}
	want := []kueue.ResourceGroup{
		{CoveredResources: []corev1.ResourceName{"cpu", "memory"}, Flavors: []kueue.FlavorQuotas{
			{Name: "alpha", Resources: []kueue.ResourceQuota{
				{Name: "cpu", NominalQuota: q("9"), BorrowingLimit: qp("1")},
				{Name: "memory", NominalQuota: q("36Gi"), BorrowingLimit: qp("4Gi")}}},
			// beta's resources follow the group's order, not the flag's.
			{Name: "beta", Resources: []kueue.ResourceQuota{
				{Name: "cpu", NominalQuota: q("2")}, {Name: "memory", NominalQuota: q("8Gi")}}},
		}},
		{CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "gpu", Resources: []kueue.ResourceQuota{{Name: "nvidia.com/gpu", NominalQuota: q("4"), LendingLimit: qp("2")}}},
		}},
	}
	if !equality.Semantic.DeepEqual(want, got) {
		t.Errorf("resource groups:\n got %+v\nwant %+v", got, want)
	}
}

func TestBuildResourceGroupsErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		nominal, borrowing, lending []string
		want                        string
	}{
		{"no flavor", []string{"cpu=1"}, nil, nil, "--nominal-quota"},
		{"bad quantity", []string{"a:cpu=lots"}, nil, nil, `--nominal-quota value "a:cpu=lots": quantity of cpu`},
		{"negative", nil, []string{"a:cpu=-1"}, nil, "--borrowing-limit"},
		{"no quantity", nil, nil, []string{"a:cpu"}, "--lending-limit"},
		{"twice", []string{"a:cpu=1;cpu=2"}, nil, nil, "cpu is given twice"},
		{"other resources", []string{"a:cpu=1"}, nil, []string{"a:memory=1"}, "--lending-limit value for flavor a"},
		{"overlapping groups", []string{"a:cpu=1;memory=1", "b:cpu=1"}, nil, nil, "resource cpu of flavor b is already covered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := buildResourceGroups(tc.nominal, tc.borrowing, tc.lending)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseTaintsAndTolerations(t *testing.T) {
	taints, err := parseTaints([]string{"gpu=true:NoSchedule", "spot:NoExecute"})
	if err != nil {
		t.Fatal(err)
	}
	wantTaints := []corev1.Taint{{Key: "gpu", Value: "true", Effect: "NoSchedule"}, {Key: "spot", Effect: "NoExecute"}}
	if !equality.Semantic.DeepEqual(wantTaints, taints) {
		t.Errorf("taints:\n got %+v\nwant %+v", taints, wantTaints)
	}
	tols, err := parseTolerations([]string{"gpu=true:NoSchedule", "spot", ":NoExecute"})
	if err != nil {
		t.Fatal(err)
	}
	wantTols := []corev1.Toleration{
		{Key: "gpu", Value: "true", Operator: "Equal", Effect: "NoSchedule"},
		{Key: "spot", Operator: "Exists"},
		{Operator: "Exists", Effect: "NoExecute"},
	}
	if !equality.Semantic.DeepEqual(wantTols, tols) {
		t.Errorf("tolerations:\n got %+v\nwant %+v", tols, wantTols)
	}
	for _, bad := range []struct{ taint, want string }{
		{"gpu=true", "--node-taints"}, {"gpu:PreferNoSchedule", "must be NoSchedule or NoExecute"},
		{"a:NoSchedule", ""}, // fine alone; paired with itself below
	} {
		if bad.want == "" {
			if _, err := parseTaints([]string{bad.taint, bad.taint}); err == nil || !strings.Contains(err.Error(), "two taints") {
				t.Errorf("duplicate taint: error %v", err)
			}
			continue
		}
		if _, err := parseTaints([]string{bad.taint}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("taint %q: error %v, want %q", bad.taint, err, bad.want)
		}
	}
	if _, err := parseTolerations([]string{"=v"}); err == nil || !strings.Contains(err.Error(), "--tolerations") {
		t.Errorf("toleration with a value and no key: error %v", err)
	}
}
