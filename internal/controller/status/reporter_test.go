package status

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// TestSlowRefreshesAreFollowedByLongerPauses: when the API server is slow
// (here every read of the queues takes 200 ms), the reporter waits as long
// as a refresh took on top of MinInterval, so that status writes give way
// to admissions. Without that the refreshes would start 450 ms apart (the
// cache changes all the time).
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
	cch := cache.New(lifecycle.Options{})
	r := &Reporter{Client: c, Cache: cch, MinInterval: minI, MaxInterval: time.Minute,
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
	go func() {
		for ctx.Err() == nil {
			cch.Poke()
			time.Sleep(5 * time.Millisecond)
		}
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

// TestSlowRefreshWritesCurrentStatus: a change that comes while a refresh
// waits on the API server (here, while it lists the ClusterQueues) is in
// the status it writes. A refresh of a thousand queues on an overloaded API
// server takes minutes, and statuses computed only at its start were that
// old when written.
func TestSlowRefreshWritesCurrentStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", UID: "u1"}}
	cch := cache.New(lifecycle.Options{})
	cch.SetClusterQueue(&state.ClusterQueue{Name: "cq"})
	cch.MarkSynced()
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "w", ResourceVersion: "1"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 1}}},
		Status: kueue.WorkloadStatus{
			Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
				Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "f"},
				ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"}},
		}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cq).WithStatusSubresource(cq).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*kueue.ClusterQueueList); ok {
				// The workload is admitted while the refresh waits.
				cch.UpsertWorkload(wl)
				time.Sleep(20 * time.Millisecond)
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	r := &Reporter{Client: c, Cache: cch, MinInterval: 10 * time.Millisecond}
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got kueue.ClusterQueue
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cq), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ReservingWorkloads != 1 {
		t.Fatalf("written status counts %d workloads reserving quota, want the one that reserved during the refresh",
			got.Status.ReservingWorkloads)
	}
}

// TestPauseAfterARefresh: the pause after a refresh grows with how long it
// took, from MinInterval up to MaxInterval and no further.
func TestPauseAfterARefresh(t *testing.T) {
	const minI, maxI = time.Second, 10 * time.Second
	for _, c := range []struct{ took, want time.Duration }{
		{0, minI},
		{3 * time.Second, 4 * time.Second},
		{9 * time.Second, maxI},
		{100 * time.Second, maxI},
	} {
		if got := pause(c.took, minI, maxI); got != c.want {
			t.Errorf("after a refresh of %s: pause %s, want %s", c.took, got, c.want)
		}
	}
}
