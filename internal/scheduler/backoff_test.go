package scheduler

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// The retry backoff doubles from retryBase up to retryMax, and its jitter
// only shortens a wait, by at most retryJitter of it.
func TestRetryDelayGrowsWithBoundedJitter(t *testing.T) {
	for _, r := range []float64{0, 0.25, 0.5, 0.999} {
		prev := time.Duration(0)
		for attempt := 1; attempt <= 40; attempt++ {
			want := retryMax
			if attempt <= 20 {
				want = min(retryMax, retryBase<<(attempt-1))
			}
			got := retryDelay(attempt, r)
			if got > want || float64(got) < float64(want)*(1-retryJitter) {
				t.Fatalf("attempt %d, r %.3f: delay %s, want within [%s, %s]", attempt, r, got, time.Duration(float64(want)*(1-retryJitter)), want)
			}
			if got < prev {
				t.Fatalf("attempt %d, r %.3f: delay %s shorter than the one before, %s", attempt, r, got, prev)
			}
			prev = got
		}
	}
	if got := retryDelay(1, 0); got != retryBase {
		t.Errorf("first delay without jitter %s, want %s", got, retryBase)
	}
	if got := retryDelay(9, 0); got != 64*time.Second {
		t.Errorf("ninth delay without jitter %s, want 64s", got)
	}
	if got := retryDelay(1000, 0.5); got > retryMax || got < time.Duration(float64(retryMax)*(1-retryJitter)) {
		t.Errorf("delay after 1000 failures %s, want about %s", got, retryMax)
	}
}

// A workload's failures in a row grow its wait; a success, or a change of
// its spec, starts it again; a workload created again under the same name
// starts afresh.
func TestRetriesResetOnSuccessAndSpecChange(t *testing.T) {
	r := &retries{rand: func() float64 { return 0 }}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	now := time.Unix(1000, 0)
	if _, wait := r.waiting(key, now); wait {
		t.Fatal("a workload with no failure waits")
	}
	for i, want := range []time.Duration{retryBase, 2 * retryBase, 4 * retryBase} {
		n, until := r.failed(key, "u", 1, now)
		if n != i+1 || until.Sub(now) != want {
			t.Fatalf("failure %d: attempt %d, wait %s; want attempt %d, wait %s", i+1, n, until.Sub(now), i+1, want)
		}
		if got, wait := r.waiting(key, now); !wait || !got.Equal(until) {
			t.Fatalf("failure %d: waiting %v until %s, want until %s", i+1, wait, got, until)
		}
		if _, wait := r.waiting(key, until); wait {
			t.Fatalf("failure %d: still waiting once the wait is over", i+1)
		}
		now = until
	}
	if n, _ := r.failed(key, "u", 2, now); n != 1 {
		t.Errorf("after a spec change the failure counts as attempt %d, want 1", n)
	}
	r.failed(key, "u", 2, now)
	r.succeeded(key)
	if _, wait := r.waiting(key, now); wait || r.size.Load() != 0 {
		t.Fatalf("a success left the workload waiting (%d entries)", r.size.Load())
	}
	r.failed(key, "u", 2, now)
	if n, _ := r.failed(key, "again", 2, now); n != 1 {
		t.Errorf("a workload created again counts attempt %d, want 1", n)
	}
}

// However often the backoff starts again (a spec changing at every
// failure), no more than retryBudget writes to a workload fail in a
// minute: past them it waits for the minute to end.
func TestRetriesAreBoundedPerMinute(t *testing.T) {
	r := &retries{rand: func() float64 { return 0 }}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	start := time.Unix(1000, 0)
	now := start
	failures := 0
	for gen := int64(1); now.Before(start.Add(retryWindow)); gen++ {
		_, until := r.failed(key, "u", gen, now)
		failures++
		now = until
	}
	if failures > retryBudget {
		t.Fatalf("%d writes failed in a minute, want at most %d", failures, retryBudget)
	}
	if _, until := r.failed(key, "u", 1000, now); until.Sub(now) != retryBase {
		t.Errorf("in the next minute the wait is %s, want %s again", until.Sub(now), retryBase)
	}
}

// A note of why a workload waits whose write fails with an error that may
// pass (here a 503) is not written again before the workload's backoff
// ends, and is written after it.
func TestFailedPendingWriteBacksOff(t *testing.T) {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", UID: "u"}}
	writes, failing := 0, true
	c := fake.NewClientBuilder().WithScheme(kueueScheme(t)).WithObjects(wl).WithStatusSubresource(wl).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				writes++
				if failing {
					return apierrors.NewServiceUnavailable("test: the API server is overloaded")
				}
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	now := time.Unix(1000, 0)
	s := &Scheduler{Client: c, Writer: &apply.Writer{Client: c}, Recorder: record.NewFakeRecorder(10),
		Cache: cache.New(lifecycle.Options{}), Now: func() time.Time { return now }}
	s.retries.rand = func() float64 { return 0 }
	key := client.ObjectKeyFromObject(wl)
	note := pendingNote{uid: "u", reason: kueue.WorkloadReasonPending, message: "waiting"}
	s.sendPending(context.Background(), key, note, now)
	s.sendPending(context.Background(), key, note, now.Add(retryBase/2))
	if writes != 1 {
		t.Fatalf("%d writes within the backoff after a failure, want 1", writes)
	}
	failing = false
	s.sendPending(context.Background(), key, note, now.Add(retryBase))
	if writes != 2 {
		t.Fatalf("%d writes once the backoff is over, want 2", writes)
	}
	var got kueue.Workload
	if err := c.Get(context.Background(), key, &got); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadQuotaReserved); cond == nil || cond.Reason != kueue.WorkloadReasonPending {
		t.Fatalf("QuotaReserved = %+v, want the note written", cond)
	}
	if _, wait := s.retries.waiting(key, now.Add(retryBase)); wait {
		t.Error("still backing off after a write went through")
	}
}
