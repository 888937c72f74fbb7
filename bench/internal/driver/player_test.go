package driver

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// liveTest holds an admitted workload in a fake API server and returns the
// driver, the client and the version the harness's watch saw.
func liveTest(t *testing.T) (*Driver, client.Client, *kueue.Workload) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(t0)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl"},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq"}, Conditions: []metav1.Condition{
			{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: at},
			{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: at},
		}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).Build()
	var seen kueue.Workload
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), &seen); err != nil {
		t.Fatal(err)
	}
	return &Driver{client: c}, c, &seen
}

// An unrelated write made the harness's view stale: the finish is written
// against the live version.
func TestRetryLiveFinishesOnTheLiveVersion(t *testing.T) {
	d, c, seen := liveTest(t)
	ctx := context.Background()
	live := seen.DeepCopy()
	live.Labels = map[string]string{"touched": "yes"}
	if err := c.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	wrote, err := d.retryLive(ctx, seen, Finish, t0.Add(time.Minute))
	if err != nil || !wrote {
		t.Fatalf("retryLive = %v, %v; want the finish written", wrote, err)
	}
	var got kueue.Workload
	if err := c.Get(ctx, client.ObjectKeyFromObject(seen), &got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, kueue.WorkloadFinished) {
		t.Fatalf("workload not finished: %+v", got.Status.Conditions)
	}
}

// The manager evicted the workload meanwhile: the finish is not written,
// and the conflict is returned so the step waits for the watch.
func TestRetryLiveDoesNotFinishAnEvictedWorkload(t *testing.T) {
	d, c, seen := liveTest(t)
	ctx := context.Background()
	live := seen.DeepCopy()
	meta.SetStatusCondition(&live.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted, Status: metav1.ConditionTrue,
		Reason: "Preempted", LastTransitionTime: metav1.NewTime(t0)})
	if err := c.Status().Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	wrote, err := d.retryLive(ctx, seen, Finish, t0.Add(time.Minute))
	if wrote || !apierrors.IsConflict(err) {
		t.Fatalf("retryLive = %v, %v; want a conflict and no write", wrote, err)
	}
	var got kueue.Workload
	if err := c.Get(ctx, client.ObjectKeyFromObject(seen), &got); err != nil {
		t.Fatal(err)
	}
	if meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadFinished) != nil {
		t.Fatalf("an evicted workload was finished: %+v", got.Status.Conditions)
	}
}
