package status

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// TestSlowRefreshesAreFollowedByLongerPauses: when the API server is slow
// (here every read of the queues takes 200 ms), the reporter waits as long
// as a refresh took on top of MinInterval, so that status writes give way
// to admissions. Without that the refreshes would start 250 ms apart.
func TestSlowRefreshesAreFollowedByLongerPauses(t *testing.T) {
	const slow, minI = 200 * time.Millisecond, 50 * time.Millisecond
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", UID: "u1"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cq).WithStatusSubresource(cq).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			time.Sleep(slow)
			return c.List(ctx, list, opts...)
		}}).Build()
	var mu sync.Mutex
	var starts []time.Time
	r := &Reporter{Client: c, Cache: cache.New(lifecycle.Options{}), MinInterval: minI, MaxInterval: minI + time.Millisecond,
		OnRefresh: func(*Statuses) {
			mu.Lock()
			defer mu.Unlock()
			starts = append(starts, time.Now())
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Start(ctx)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(starts)
		mu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(starts) < 4 {
		t.Fatalf("%d refreshes in 10 s, want at least 4", len(starts))
	}
	// A refresh lists twice (ClusterQueues and LocalQueues): it takes at
	// least 2*slow, and the pause after it as long again plus minI.
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 4*slow+minI {
			t.Errorf("refresh %d started %s after the one before, want at least %s", i, gap, 4*slow+minI)
		}
	}
}
