package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

const gpu = corev1.ResourceName("nvidia.com/gpu")

// gpuQueue builds a ClusterQueue with nominal GPUs in one flavor, open to
// every namespace.
func gpuQueue(name, cohort, flavorName, nominal string) *kueue.ClusterQueue {
	return &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName:        kueue.CohortReference(cohort),
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{gpu},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavorName),
				Resources: []kueue.ResourceQuota{{Name: gpu, NominalQuota: resource.MustParse(nominal)}}}},
		}},
	}}
}

// gpuWorkload builds a one-pod Workload requesting GPUs.
func gpuWorkload(ns, name, lq string, gpus int64) *kueue.Workload {
	wl := newWorkload(ns, name, lq, 1, "0", 0)
	wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{gpu: *resource.NewQuantity(gpus, resource.DecimalSI)}
	return wl
}

// borrowingCohort starts a manager and sets up the cohort: cq-a
// and cq-b with 10 GPUs nominal each (LocalQueues a and b), cq-a running
// a1 and a2 of 8 GPUs each (6 borrowed).
func borrowingCohort(t *testing.T) (ns, cqA, cqB string) {
	t.Helper()
	startManager(t)
	ns = namespace(t)
	cohort, fl := scoped(ns, "co"), scoped(ns, "gpu")
	cqA, cqB = scoped(ns, "cq-a"), scoped(ns, "cq-b")
	create(t, flavor(fl, nil), gpuQueue(cqA, cohort, fl, "10"), gpuQueue(cqB, cohort, fl, "10"),
		localQueue(ns, "a", cqA), localQueue(ns, "b", cqB))
	create(t, gpuWorkload(ns, "a1", "a", 8), gpuWorkload(ns, "a2", "a", 8))
	waitAdmitted(t, ns, "a1", cqA)
	waitAdmitted(t, ns, "a2", cqA)
	return ns, cqA, cqB
}

// The example. A cohort of cq-a and cq-b, 10 GPUs nominal each;
// cq-a uses 16 (6 borrowed). Deleting cq-a must not tell the cohort that
// its 10 GPUs are free while its workloads run: cq-b may use only the 4
// GPUs really free, not 10 more (26 promised on 20). The terminating queue
// admits nothing new, says so in its status and events, and leaves only
// once its last reservation is released.
func TestTerminatingClusterQueueKeepsItsPlaceInTheCohort(t *testing.T) {
	ns, cqA, cqB := borrowingCohort(t)
	ctx := context.Background()

	if err := env.Client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cqA}}); err != nil {
		t.Fatal(err)
	}
	waitClusterQueueActive(t, cqA, metav1.ConditionFalse, "Terminating")
	waitEvent(t, "", cqA, corev1.EventTypeNormal, "Terminating")
	var b []string
	for i := range 10 {
		b = append(b, fmt.Sprintf("b%d", i))
		create(t, gpuWorkload(ns, b[i], "b", 1))
	}
	create(t, gpuWorkload(ns, "a3", "a", 1))
	eventually(t, 45*time.Second, "cq-b admits the 4 free GPUs", func() error {
		if n := len(admittedIn(t, ns, cqB)); n != 4 {
			return fmt.Errorf("%d of cq-b's workloads admitted, want 4", n)
		}
		return nil
	})
	stayPending(t, ns, "a3")
	if n := len(admittedIn(t, ns, cqB)); n != 4 {
		t.Fatalf("%d of cq-b's workloads admitted, want still 4 while cq-a's 16 GPUs run", n)
	}

	// One of cq-a's workloads ends: 8 GPUs come back to the cohort, and cq-b
	// may use them (6 more fill its 10 workloads; cq-a's nominal still
	// counts, so 12 is cq-b's limit).
	finish(t, ns, "a1")
	eventually(t, 45*time.Second, "cq-b admits its other 6 workloads", func() error {
		if n := len(admittedIn(t, ns, cqB)); n != 10 {
			return fmt.Errorf("%d of cq-b's workloads admitted, want 10", n)
		}
		return nil
	})
	if err := env.Client.Get(ctx, types.NamespacedName{Name: cqA}, &kueue.ClusterQueue{}); err != nil {
		t.Fatalf("cq-a must stay while a2 runs: %v", err)
	}
	finish(t, ns, "a2")
	eventually(t, 45*time.Second, "cq-a gone once its last reservation is released", func() error {
		if err := env.Client.Get(ctx, types.NamespacedName{Name: cqA}, &kueue.ClusterQueue{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("cq-a still there (%v)", err)
		}
		return nil
	})
	checkAudit(t, ns)
}

// When the finalizer is taken off by force, the ClusterQueue object goes at
// once, but its workloads still run: its usage (and nominal quota) stays
// counted in the cohort until they release it.
func TestForcedClusterQueueDeletionKeepsUsageCounted(t *testing.T) {
	ns, cqA, cqB := borrowingCohort(t)
	ctx := context.Background()
	if err := env.Client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cqA}}); err != nil {
		t.Fatal(err)
	}
	update(t, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cqA}}, func(cq *kueue.ClusterQueue) { cq.Finalizers = nil })
	eventually(t, 45*time.Second, "cq-a gone", func() error {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: cqA}, &kueue.ClusterQueue{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v)", err)
		}
		return nil
	})
	create(t, gpuWorkload(ns, "b-fits", "b", 4))
	waitAdmitted(t, ns, "b-fits", cqB)
	create(t, gpuWorkload(ns, "b-more", "b", 6))
	stayPending(t, ns, "b-more")
	finish(t, ns, "a1")
	waitAdmitted(t, ns, "b-more", cqB)
	finish(t, ns, "a2")
	checkAudit(t, ns)
}
