package status

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// TestStaleCacheStillGetsTheLatestStatus: the cache lags behind the
// reporter's own writes; a status equal to the stale cached one must still
// be written, and one equal to the last write must not be written twice.
func TestStaleCacheStillGetsTheLatestStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", UID: "u1"}}
	patches := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cq).WithStatusSubresource(cq).
		WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object,
			patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}}).Build()
	var stale kueue.ClusterQueue
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cq), &stale); err != nil {
		t.Fatal(err)
	}
	r := &Reporter{Client: c}
	refresh := func(want kueue.ClusterQueueStatus) {
		t.Helper()
		obj := stale.DeepCopy() // what the lagging cache shows
		w := r.newWrites(context.Background())
		w.write(obj, &obj.Status, &want)
		if err := w.wait(); err != nil {
			t.Fatal(err)
		}
	}
	one := kueue.ClusterQueueStatus{AdmittedWorkloads: 1, ReservingWorkloads: 1}
	refresh(one)
	refresh(one)
	if patches != 1 {
		t.Fatalf("the same status was written %d times, want once", patches)
	}
	refresh(kueue.ClusterQueueStatus{}) // equal to the stale cached status
	if patches != 2 {
		t.Fatalf("a status equal to the stale cache was not written (%d writes)", patches)
	}
	var got kueue.ClusterQueue
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cq), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.AdmittedWorkloads != 0 || got.Status.ReservingWorkloads != 0 {
		t.Fatalf("the API server holds %+v, want an empty status", got.Status)
	}
}
