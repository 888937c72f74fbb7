package fairsharing

import (
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

var cpu = resources.FlavorResource{Flavor: "default", Resource: corev1.ResourceCPU}

// teams builds a Cohort with 100 cpu of its own and two queues with no
// quota of their own and the given weights.
func teams(t *testing.T, weightA, weightB string) *state.State {
	t.Helper()
	st := state.New()
	st.SetFlavor(&state.Flavor{Name: "default"})
	org, err := state.NewCohort(&kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: "org"}, Spec: kueue.CohortSpec{
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")}}}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st.SetCohort(org)
	for name, w := range map[string]string{"a": weightA, "b": weightB} {
		weight := resource.MustParse(w)
		cq, err := state.NewClusterQueue(&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
			CohortName:  "org",
			FairSharing: &kueue.FairSharing{Weight: &weight},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("0")}}}}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		st.SetClusterQueue(cq)
	}
	return st
}

func use(t *testing.T, st *state.State, cq string, n int64) {
	t.Helper()
	if err := st.Assume(&state.Admitted{Key: types.NamespacedName{Namespace: "ns", Name: cq + "-run"},
		ClusterQueue: kueue.ClusterQueueReference(cq), Usage: resources.FlavorResourceQuantities{cpu: n * 1000}}); err != nil {
		t.Fatal(err)
	}
}

func TestWeightedShareFollowsWeights(t *testing.T) {
	st := teams(t, "0.6", "0.4")
	use(t, st, "a", 60)
	use(t, st, "b", 40)
	shares := weightedShares(st)
	// 60 of 100 lendable = 600 per mille, / weight 0.6 = 1000; b: 400 / 0.4 = 1000.
	if shares.ClusterQueues["a"] != 1000 || shares.ClusterQueues["b"] != 1000 {
		t.Fatalf("shares = %v, want both 1000 (a 60/100 at weight 0.6, b 40/100 at weight 0.4)", shares.ClusterQueues)
	}
	if shares.Cohorts["org"] != 0 {
		t.Errorf("a root Cohort has no parent to borrow from: share %d, want 0", shares.Cohorts["org"])
	}
}

func TestShareIsZeroWithinOwnQuotaAndInfiniteForWeightZero(t *testing.T) {
	st := teams(t, "1", "0")
	shares := weightedShares(st)
	if shares.ClusterQueues["a"] != 0 || shares.ClusterQueues["b"] != 0 {
		t.Fatalf("idle queues: %v, want 0", shares.ClusterQueues)
	}
	use(t, st, "b", 1)
	if got := weightedShares(st).ClusterQueues["b"]; got != Infinite {
		t.Fatalf("a weight-0 queue that borrows has share %d, want %d", got, Infinite)
	}
}

func TestShareWithExtraUsage(t *testing.T) {
	st := teams(t, "1", "1")
	snap := st.Snapshot()
	n := snap.Tree.ClusterQueue("a")
	share, dominant := Share(n, resources.FlavorResourceQuantities{cpu: 25000}, resources.One)
	if Published(share) != 250 || dominant != corev1.ResourceCPU {
		t.Fatalf("share with 25 of 100 cpu = %v (%s), want 250 (cpu)", share, dominant)
	}
	if Borrowing(n, resources.FlavorResourceQuantities{cpu: 1}) != true {
		t.Fatal("a queue with no quota of its own borrows anything it uses")
	}
}

func TestSharesAreComparedExactly(t *testing.T) {
	st := teams(t, "60", "40")
	snap := st.Snapshot()
	one := resources.FlavorResourceQuantities{cpu: 1000}
	a, _ := Share(snap.Tree.ClusterQueue("a"), one, 60*resources.One)
	b, _ := Share(snap.Tree.ClusterQueue("b"), one, 40*resources.One)
	// 1 of 100 cpu is 10 per mille; / 60 = 0.1667, / 40 = 0.25: a is lower.
	if !(a < b) {
		t.Fatalf("share a = %v, b = %v: one cpu at weight 60 must weigh less than at weight 40", a, b)
	}
}

// weightedShares computes the shares both ways, from a snapshot and from
// the live state, and checks that they agree.
func weightedShares(st *state.State) Shares {
	snap := st.Snapshot()
	fromSnap := WeightedShares(snap.Tree, SnapshotWeights(snap))
	live := WeightedShares(st.Tree(), StateWeights(st))
	if !maps.Equal(fromSnap.ClusterQueues, live.ClusterQueues) || !maps.Equal(fromSnap.Cohorts, live.Cohorts) {
		panic(fmt.Sprintf("shares differ: snapshot %v, live %v", fromSnap, live))
	}
	return live
}
