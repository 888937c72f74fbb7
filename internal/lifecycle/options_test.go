package lifecycle

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestBackoffGrowsAndCaps(t *testing.T) {
	b := Backoff{Base: 10 * time.Second, Max: 60 * time.Second, Limit: ptr.To[int32](4)}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := &kueue.WorkloadStatus{}
	for i, want := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 60 * time.Second} {
		if b.Exceeded(st) {
			t.Fatalf("requeue %d: limit exceeded too early", i+1)
		}
		b.Requeue(st, now)
		if got := *st.RequeueState.Count; got != int32(i+1) {
			t.Fatalf("count = %d, want %d", got, i+1)
		}
		if got := st.RequeueState.RequeueAt.Sub(now); got != want {
			t.Fatalf("requeue %d: wait %s, want %s", i+1, got, want)
		}
	}
	if !b.Exceeded(st) {
		t.Fatal("a fifth requeue must exceed a limit of 4")
	}
	if (Backoff{}).Exceeded(st) {
		t.Fatal("without a limit requeues never run out")
	}
}
