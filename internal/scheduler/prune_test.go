package scheduler

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// The refusals and pending notes of workloads that were deleted are
// forgotten within a minute: thousands of workloads created and deleted
// leave nothing behind in the scheduler.
func TestSchedulerForgetsDeletedWorkloads(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &Scheduler{Cache: cache.New(lifecycle.Options{}), pending: newPendingWrites(nil, nil)}
	const n = 10000
	keys := make([]types.NamespacedName, n)
	for i := range n {
		name := fmt.Sprintf("w%d", i)
		uid := types.UID("uid-" + name)
		keys[i] = types.NamespacedName{Namespace: "ns", Name: name}
		s.Cache.UpsertWorkload(&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid}})
		s.refusals.fail(keys[i], uid)
		s.pending.note(keys[i], uid, "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	}
	drain(s.pending, now.Add(pendingGrace))
	s.pruneGone(now)
	if len(s.refusals.count) != n || len(s.pending.entries) != n {
		t.Fatalf("%d refusals and %d notes of live workloads kept, want %d each", len(s.refusals.count), len(s.pending.entries), n)
	}
	for _, key := range keys {
		s.Cache.DeleteWorkload(key)
	}
	s.pruneGone(now.Add(pruneEvery))
	if len(s.refusals.count) != 0 || len(s.pending.entries) != 0 {
		t.Fatalf("%d refusals and %d notes left after every workload was deleted", len(s.refusals.count), len(s.pending.entries))
	}
}

// A workload created again under the name of one that was refused and
// told why it waited is a new workload: its refusals count from one, and
// it is told why it waits even for the same reason.
func TestRecreatedWorkloadStartsAfresh(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &Scheduler{Cache: cache.New(lifecycle.Options{}), pending: newPendingWrites(nil, nil)}
	key := types.NamespacedName{Namespace: "ns", Name: "w"}
	for range 3 {
		s.refusals.fail(key, "old")
	}
	s.pending.note(key, "old", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	drain(s.pending, now.Add(pendingGrace))

	if got := s.refusals.fail(key, "new"); got != 1 {
		t.Errorf("the new workload's first refusal counts %d, want 1 (its backoff starts at %s)", got, rejectedBase)
	}
	now = now.Add(time.Minute)
	s.pending.note(key, "new", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	if got := drain(s.pending, now.Add(pendingGrace)); len(got) != 1 {
		t.Fatalf("the new workload is not told why it waits (%d notes): the old one's note counts for it", len(got))
	}
}
