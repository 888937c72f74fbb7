package manager

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// With fair sharing, two ClusterQueues without quota of their own share
// their Cohort's quota in proportion to their weights (3:1), and publish
// their weighted shares, which end up about equal.
func TestFairSharingFollowsWeights(t *testing.T) {
	ns := namespace(t)
	cohort, fl := scoped(ns, "co"), scoped(ns, "f")
	heavy, light := scoped(ns, "heavy"), scoped(ns, "light")
	weight := func(w string) func(*kueue.ClusterQueue) {
		return func(cq *kueue.ClusterQueue) {
			cq.Spec.FairSharing = &kueue.FairSharing{Weight: ptr.To(resource.MustParse(w))}
		}
	}
	create(t, flavor(fl, nil),
		&kueue.Cohort{ObjectMeta: metav1.ObjectMeta{Name: cohort}, Spec: kueue.CohortSpec{
			ResourceGroups: []kueue.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("12")}}}},
			}},
		}},
		clusterQueue(heavy, cohort, fl, "0", weight("3")), clusterQueue(light, cohort, fl, "0", weight("1")),
		localQueue(ns, "heavy", heavy), localQueue(ns, "light", light))
	// Both queues are deep before the manager starts, so that neither gets
	// ahead by arriving first.
	for i := range 20 {
		create(t, newWorkload(ns, fmt.Sprintf("h%02d", i), "heavy", 1, "1", 0),
			newWorkload(ns, fmt.Sprintf("l%02d", i), "light", 1, "1", 0))
	}
	startManager(t, func(cfg *configapi.Configuration) {
		cfg.FairSharing = &configapi.FairSharing{PreemptionStrategies: []configapi.PreemptionStrategy{
			"LessThanOrEqualToFinalShare", "LessThanInitialShare"}}
	})

	var h, l int
	eventually(t, 45*time.Second, "the cohort's 12 cpu admitted 3:1", func() error {
		h, l = len(admittedIn(t, ns, heavy)), len(admittedIn(t, ns, light))
		if h+l != 12 || h < 8 || h > 10 {
			return fmt.Errorf("admitted %d in %s and %d in %s, want 9 and 3 (±1)", h, heavy, l, light)
		}
		return nil
	})
	// The split is stable: nothing else is admitted or preempted.
	time.Sleep(time.Second)
	if h2, l2 := len(admittedIn(t, ns, heavy)), len(admittedIn(t, ns, light)); h2 != h || l2 != l {
		t.Errorf("split moved from %d/%d to %d/%d", h, l, h2, l2)
	}

	shares := map[string]int64{}
	for _, name := range []string{heavy, light} {
		waitQueueStatus(t, name, func(st *kueue.ClusterQueueStatus) error {
			if st.FairSharing == nil || st.FairSharing.WeightedShare == 0 {
				return fmt.Errorf("fairSharing %+v, want a non-zero weightedShare", st.FairSharing)
			}
			if st.PendingWorkloads+st.AdmittedWorkloads != 20 {
				return fmt.Errorf("pending %d admitted %d, want 20 in all", st.PendingWorkloads, st.AdmittedWorkloads)
			}
			shares[name] = st.FairSharing.WeightedShare
			return nil
		})
	}
	// 9 of 12 cpu borrowed at weight 3 and 3 of 12 at weight 1 are both
	// 250 (borrowed x 1000 / 12 / weight); one workload more or less moves
	// a share by 28 (heavy) or 83 (light).
	t.Logf("admitted %d/%d, weighted shares %d/%d", h, l, shares[heavy], shares[light])
	if d := shares[heavy] - shares[light]; d < -200 || d > 200 {
		t.Errorf("weighted shares %d (%s) and %d (%s) are far apart", shares[heavy], heavy, shares[light], light)
	}
}
