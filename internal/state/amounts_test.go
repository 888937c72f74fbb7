package state

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

var memory = resources.FlavorResource{Flavor: "f", Resource: corev1.ResourceMemory}

// memoryGroups is a quota table of memory in flavor f.
func memoryGroups(nominal string, borrowing *resource.Quantity) []kueue.ResourceGroup {
	return []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceMemory},
		Flavors: []kueue.FlavorQuotas{{Name: "f", Resources: []kueue.ResourceQuota{
			{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse(nominal), BorrowingLimit: borrowing}}}}}}
}

func memoryQueue(t *testing.T, name, nominal string) *ClusterQueue {
	t.Helper()
	cq, err := NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kueue.ClusterQueueSpec{CohortName: "storage", ResourceGroups: memoryGroups(nominal, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	return cq
}

func bytesOf(t *testing.T, s string) resources.Amount {
	t.Helper()
	a, err := resources.FromQuantity(corev1.ResourceMemory, resource.MustParse(s))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func show(a resources.Amount) string {
	q := resources.ToQuantity(corev1.ResourceMemory, a)
	return q.String()
}

// TestIssue53PebibyteQueues is issue 53 from the ClusterQueue objects:
// two queues of 5Pi of memory make a cohort of 10Pi, not an unlimited
// one; with 5Pi used by one, the other cannot get 6Pi; after the release
// the cohort is back to 10Pi with no usage.
func TestIssue53PebibyteQueues(t *testing.T) {
	s := New()
	s.SetClusterQueue(memoryQueue(t, "a", "5Pi"))
	s.SetClusterQueue(memoryQueue(t, "b", "5Pi"))
	tenPi := bytesOf(t, "10Pi")
	if got := s.Tree().Cohort("storage").SubtreeQuota(memory); got != tenPi {
		t.Fatalf("cohort quota = %s, want 10Pi", show(got))
	}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	if err := s.Assume(&Admitted{Key: key, ClusterQueue: "a", Usage: resources.FlavorResourceQuantities{memory: bytesOf(t, "5Pi")}}); err != nil {
		t.Fatal(err)
	}
	b := s.Snapshot().Tree.ClusterQueue("b")
	if got := b.Available(memory); got != bytesOf(t, "5Pi") {
		t.Errorf("b can obtain %s, want 5Pi", show(got))
	}
	if _, fits := b.BorrowingLevel(memory, bytesOf(t, "6Pi")); fits {
		t.Error("b gets 6Pi: 11Pi on a cohort of 10Pi")
	}
	s.Forget(key)
	cohort := s.Tree().Cohort("storage")
	if q, u := cohort.SubtreeQuota(memory), cohort.Usage(memory); q != tenPi || u != 0 {
		t.Errorf("after the release the cohort has quota %d and usage %d, want %d and 0", q, u, tenPi)
	}
}

// TestQuotasThatCannotBeCountedAreRefused: a quota beyond what Kuota
// counts fails the conversion with the path of the field, for a
// ClusterQueue and for a Cohort, instead of becoming a saturated value.
func TestQuotasThatCannotBeCountedAreRefused(t *testing.T) {
	tooMuch := resource.MustParse("5Ei")
	_, err := NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec: kueue.ClusterQueueSpec{CohortName: "storage", ResourceGroups: memoryGroups("1Ei", &tooMuch)}})
	if err == nil || !strings.Contains(err.Error(), "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit") ||
		!strings.Contains(err.Error(), "at most 4Ei") {
		t.Errorf("ClusterQueue: got %v, want an error naming borrowingLimit and the limit", err)
	}
	_, err = NewCohort(&kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "big"},
		Spec: kueue.CohortSpec{ResourceGroups: memoryGroups("8Ei", nil)}})
	if err == nil || !strings.Contains(err.Error(), "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota") {
		t.Errorf("Cohort: got %v, want an error naming nominalQuota", err)
	}
	if _, err := NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "most"},
		Spec: kueue.ClusterQueueSpec{ResourceGroups: memoryGroups("4Ei", nil)}}); err != nil {
		t.Errorf("4Ei is countable: %v", err)
	}
}
