package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// kueueScheme knows Kueue's API.
func kueueScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// notePending writes a note of why the workload waits, as the pending
// writer does, and returns the workload as the API server then holds it.
func notePending(t *testing.T, s *Scheduler, c client.Client, key types.NamespacedName, reason string, at int64) *kueue.Workload {
	t.Helper()
	s.sendPending(context.Background(), key, pendingNote{reason: reason, message: "waiting: " + reason}, time.Unix(at, 0))
	var wl kueue.Workload
	if err := c.Get(context.Background(), key, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

// newAdmitTest returns a scheduler over a fake API holding one pending
// workload, and that workload as the scheduler decided on it (assumed
// admitted in the cache on its current version).
func newAdmitTest(t *testing.T) (*Scheduler, client.Client, *kueue.Workload) {
	t.Helper()
	scheme := kueueScheme(t)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl", UID: "u"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).Build()
	s := &Scheduler{Client: c, Writer: &apply.Writer{Client: c}, Recorder: record.NewFakeRecorder(10), Cache: cache.New(lifecycle.Options{}),
		log: logr.Discard()}
	var decided kueue.Workload
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), &decided); err != nil {
		t.Fatal(err)
	}
	return s, c, &decided
}

func (s *Scheduler) assumeForTest(t *testing.T, decided *kueue.Workload) {
	t.Helper()
	a := &state.Admitted{Key: client.ObjectKeyFromObject(decided), UID: decided.UID, ClusterQueue: "cq", Admitted: true}
	if err := s.Cache.Assume(a, decided.ResourceVersion); err != nil {
		t.Fatal(err)
	}
}

// TestAdmissionGoesThroughOwnPendingWrite: the scheduler's own note of why
// the workload waited, landing between the decision and the admission's
// write, does not make the admission fail.
func TestAdmissionGoesThroughOwnPendingWrite(t *testing.T) {
	s, c, decided := newAdmitTest(t)
	ctx, key := context.Background(), client.ObjectKeyFromObject(decided)
	noted := notePending(t, s, c, key, kueue.WorkloadReasonPending, 1000)
	if noted.ResourceVersion == decided.ResourceVersion {
		t.Fatal("the pending write made no new version; the test proves nothing")
	}
	s.assumeForTest(t, decided)
	base, err := s.admissionBase(ctx, key, decided.UID, decided.ResourceVersion)
	if err != nil {
		t.Fatalf("admission over the scheduler's own pending write refused: %v", err)
	}
	if base.ResourceVersion != noted.ResourceVersion {
		t.Fatalf("admission written against version %s, want %s (after the pending write)", base.ResourceVersion, noted.ResourceVersion)
	}
	now := metav1.NewTime(time.Unix(1001, 0))
	if err := s.Writer.WorkloadStatus(ctx, base, apply.Reserve(base, &kueue.Admission{ClusterQueue: "cq"}, nil, now), apply.AdmissionManager); err != nil {
		t.Fatal(err)
	}
	var got kueue.Workload
	if err := c.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, kueue.WorkloadAdmitted) || got.Status.Admission == nil {
		t.Fatalf("workload not admitted: %+v", got.Status)
	}
}

// TestAdmissionRefusedAfterForeignChange: a change someone else made since
// the decision makes the admission fail, even after an own pending write.
func TestAdmissionRefusedAfterForeignChange(t *testing.T) {
	s, c, decided := newAdmitTest(t)
	ctx, key := context.Background(), client.ObjectKeyFromObject(decided)
	wl := notePending(t, s, c, key, kueue.WorkloadReasonPending, 1000)
	wl.Spec.Active = new(bool)
	if err := c.Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	s.assumeForTest(t, decided)
	if _, err := s.admissionBase(ctx, key, decided.UID, decided.ResourceVersion); err == nil {
		t.Fatal("admission over a deactivation made after the decision was allowed")
	}
}

// TestAdmissionRefusedOnceUndone: an admission the cache undid (the
// workload changed and was queued again) is not written.
func TestAdmissionRefusedOnceUndone(t *testing.T) {
	s, _, decided := newAdmitTest(t)
	s.assumeForTest(t, decided)
	s.Cache.Forget(types.NamespacedName{Namespace: "ns", Name: "wl"})
	if _, err := s.admissionBase(context.Background(), client.ObjectKeyFromObject(decided), decided.UID, decided.ResourceVersion); err == nil {
		t.Fatal("an undone admission was written")
	}
}

// TestPendingWriteOverOwnUnseenWrite: a second note of why a workload
// waits is written even when the informer does not show the first yet.
func TestPendingWriteOverOwnUnseenWrite(t *testing.T) {
	s, c, decided := newAdmitTest(t)
	ctx, key := context.Background(), client.ObjectKeyFromObject(decided)
	notePending(t, s, c, key, kueue.WorkloadReasonPending, 1000)
	// The informer still shows the version before that write.
	stale := fake.NewClientBuilder().WithScheme(c.Scheme()).WithObjects(decided).WithStatusSubresource(decided).Build()
	s.Client = stale
	s.sendPending(ctx, key, pendingNote{reason: "Preempting", message: "waiting for preempted workloads"}, time.Unix(1001, 0))
	var got kueue.Workload
	if err := c.Get(ctx, key, &got); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadQuotaReserved); cond == nil || cond.Reason != "Preempting" {
		t.Fatalf("QuotaReserved = %+v, want reason Preempting from the second note", cond)
	}
}

// A note that comes due after its workload finished is dropped: a finished
// Workload does not read as waiting for quota.
func TestPendingNoteOfAFinishedWorkloadIsDropped(t *testing.T) {
	s, c, wl := newAdmitTest(t)
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: kueue.WorkloadFinishedFailed, Message: "finished by an administrator"})
	if err := c.Status().Update(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	got := notePending(t, s, c, client.ObjectKeyFromObject(wl), kueue.WorkloadReasonPending, 1000)
	if meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadQuotaReserved) != nil {
		t.Fatalf("a pending note was written on a finished Workload: %+v", got.Status.Conditions)
	}
}
