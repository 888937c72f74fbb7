package admission

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// memoryQueue is a ClusterQueue of cohort "co" with 10 cpus and the given
// memory quota.
func memoryQueue(name, memory string) *kueue.ClusterQueue {
	cq := newClusterQueue(name)
	cq.Spec.CohortName = "co"
	g := &cq.Spec.ResourceGroups[0]
	g.CoveredResources = append(g.CoveredResources, corev1.ResourceMemory)
	g.Flavors[0].Resources = append(g.Flavors[0].Resources, kueue.ResourceQuota{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse(memory)})
	return cq
}

// TestAmountsThatCannotBeCountedAreRejected: the webhooks refuse quotas,
// limits and requests beyond what Kuota counts (4Ei of memory), naming the
// field and the limit; 4Ei itself, and the 5Pi of issue 53, are accepted.
func TestAmountsThatCannotBeCountedAreRejected(t *testing.T) {
	ctx := context.Background()
	for _, memory := range []string{"5Pi", "4Ei"} {
		if err := k8s.Create(ctx, memoryQueue("countable-cq", memory), client.DryRunAll); err != nil {
			t.Errorf("a ClusterQueue of %s of memory was rejected: %v", memory, err)
		}
	}
	err := k8s.Create(ctx, memoryQueue("uncountable-cq", "5Ei"), client.DryRunAll)
	expectDenied(t, err, "vclusterqueue.kb.io", "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota")
	if !strings.Contains(err.Error(), "at most 4Ei") {
		t.Errorf("the denial should give the limit: %v", err)
	}

	limited := memoryQueue("uncountable-limit", "1Ei")
	limited.Spec.ResourceGroups[0].Flavors[0].Resources[1].BorrowingLimit = ptr.To(resource.MustParse("6Ei"))
	expectDenied(t, k8s.Create(ctx, limited, client.DryRunAll), "vclusterqueue.kb.io",
		"spec.resourceGroups[0].flavors[0].resources[1].borrowingLimit")

	co := &kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "uncountable-co"}, Spec: kueue.CohortSpec{
		ResourceGroups: memoryQueue("", "5Ei").Spec.ResourceGroups}}
	expectDenied(t, k8s.Create(ctx, co, client.DryRunAll), "vcohort.kb.io", "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota")

	wl := newWorkload("uncountable-wl")
	wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse("5Ei")
	expectDenied(t, k8s.Create(ctx, wl, client.DryRunAll), "vworkload.kb.io",
		"spec.podSets[0].template.spec.containers[0].resources.requests[memory]")
}
