package crds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func create(ctx context.Context, t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
}

// TestServerAppliesKueueDefaults creates minimal objects and checks that the
// API server fills in Kueue's defaults, as a user reading them back expects.
func TestServerAppliesKueueDefaults(t *testing.T) {
	ctx := context.Background()

	cq := &kueue.ClusterQueue{}
	cq.Name = "defaults-cq"
	cq.Spec.FairSharing = &kueue.FairSharing{}
	create(ctx, t, cq)
	if cq.Spec.QueueingStrategy != kueue.BestEffortFIFO {
		t.Errorf("queueingStrategy = %q, want BestEffortFIFO", cq.Spec.QueueingStrategy)
	}
	if cq.Spec.StopPolicy == nil || *cq.Spec.StopPolicy != kueue.None {
		t.Errorf("stopPolicy = %v, want None", cq.Spec.StopPolicy)
	}
	ff := cq.Spec.FlavorFungibility
	if ff == nil || ff.WhenCanBorrow != kueue.MayStopSearch || ff.WhenCanPreempt != kueue.TryNextFlavor {
		t.Errorf("flavorFungibility = %+v, want MayStopSearch/TryNextFlavor", ff)
	}
	p := cq.Spec.Preemption
	if p == nil || p.ReclaimWithinCohort != kueue.PreemptionPolicyNever || p.WithinClusterQueue != kueue.PreemptionPolicyNever ||
		p.BorrowWithinCohort == nil || p.BorrowWithinCohort.Policy != kueue.BorrowWithinCohortPolicyNever {
		t.Errorf("preemption = %+v, want every policy Never", p)
	}
	if w := cq.Spec.FairSharing.Weight; w == nil || w.Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("fairSharing.weight = %v, want 1", w)
	}

	// A PodSet without name and count gets name main and count 1.
	u := mustDecode(t, workloadHeader+"spec:\n  podSets:\n  - "+podTemplate[4:])
	u.SetName("defaults-wl")
	if err := serverSideApply(ctx, u); err != nil {
		t.Fatalf("creating workload: %v", err)
	}
	wl := &kueue.Workload{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), wl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), wl) })
	if wl.Spec.Active == nil || !*wl.Spec.Active {
		t.Errorf("active = %v, want true", wl.Spec.Active)
	}
	if ps := wl.Spec.PodSets[0]; ps.Name != kueue.DefaultPodSetName || ps.Count != 1 {
		t.Errorf("podSet = name %q count %d, want main/1", ps.Name, ps.Count)
	}

	// Count 0 is valid and must be kept, not replaced by the default.
	wl0 := &kueue.Workload{}
	wl0.Name, wl0.Namespace = "defaults-wl-zero", "default"
	wl0.Spec.PodSets = []kueue.PodSet{{Name: "main", Count: 0, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers:    []corev1.Container{{Name: "c", Image: "busybox"}},
	}}}}
	create(ctx, t, wl0)
	if got := wl0.Spec.PodSets[0].Count; got != 0 {
		t.Errorf("podSet count 0 read back as %d", got)
	}

	prc := &kueue.ProvisioningRequestConfig{}
	prc.Name = "defaults-prc"
	prc.Spec.ProvisioningClassName = "check-capacity.autoscaling.x-k8s.io"
	create(ctx, t, prc)
	rs := prc.Spec.RetryStrategy
	if rs == nil || *rs.BackoffLimitCount != 3 || *rs.BackoffBaseSeconds != 60 || *rs.BackoffMaxSeconds != 1800 {
		t.Errorf("retryStrategy = %+v, want 3/60/1800", rs)
	}

	mkc := &kueue.MultiKueueCluster{}
	mkc.Name = "defaults-mkc"
	mkc.Spec.ClusterSource.KubeConfig = &kueue.KubeConfig{Location: "worker1-secret"}
	create(ctx, t, mkc)
	if got := mkc.Spec.ClusterSource.KubeConfig.LocationType; got != kueue.SecretLocationType {
		t.Errorf("locationType = %q, want Secret", got)
	}
}
