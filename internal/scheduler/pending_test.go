package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/types"
)

func noteOf(reason, message string) func() pendingNote {
	return func() pendingNote { return pendingNote{reason: reason, message: message} }
}

// drain pops every note due at now, as if each write succeeded.
func drain(p *pendingWrites, now time.Time) []pendingNote {
	var out []pendingNote
	for {
		key, n, _ := p.next(now)
		if n == nil {
			return out
		}
		p.written(key, n.reason, now)
		out = append(out, *n)
	}
}

// A note whose write failed is not taken as written: the next refusal
// with the same reason is written, without waiting for the refresh.
func TestFailedPendingWriteIsWrittenAgain(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPendingWrites(nil, nil)
	key := types.NamespacedName{Namespace: "ns", Name: "wl"}
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	if _, n, _ := p.next(now.Add(pendingGrace)); n == nil {
		t.Fatal("no note due after the grace")
	} // the write fails: written is not called
	now = now.Add(time.Minute)
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	if got := drain(p, now.Add(pendingGrace)); len(got) != 1 {
		t.Fatalf("a note whose write failed was not written again: %+v", got)
	}
}

func TestPendingWritesAreDeferredAndCoalesced(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPendingWrites(nil, nil)
	key := types.NamespacedName{Namespace: "ns", Name: "wl"}

	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	p.note(key, "", "WaitingForPreemptedWorkloads", now, noteOf("WaitingForPreemptedWorkloads", "preempting 1"))
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 2 cpu"))
	if got := drain(p, now.Add(pendingGrace/2)); len(got) != 0 {
		t.Fatalf("written before the grace period: %v", got)
	}
	if _, _, wait := p.next(now.Add(pendingGrace / 2)); wait != pendingGrace/2 {
		t.Errorf("wait for the next note = %s, want %s", wait, pendingGrace/2)
	}
	got := drain(p, now.Add(pendingGrace))
	if len(got) != 1 || got[0].message != "needs 2 cpu" {
		t.Fatalf("want one write with the latest note, got %+v", got)
	}

	// The same reason with a new message is not rewritten before the refresh.
	now = now.Add(time.Minute)
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 1 cpu"))
	if got := drain(p, now.Add(pendingGrace)); len(got) != 0 {
		t.Fatalf("message-only change rewritten within the refresh period: %+v", got)
	}
	now = now.Add(messageRefresh)
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 1 cpu"))
	if got := drain(p, now.Add(pendingGrace)); len(got) != 1 {
		t.Fatalf("message not refreshed after %s: %+v", messageRefresh, got)
	}
	// A new reason is written (after the grace).
	p.note(key, "", "ExceedsMaxQuota", now, noteOf("ExceedsMaxQuota", "too big"))
	if got := drain(p, now.Add(pendingGrace)); len(got) != 1 || got[0].reason != "ExceedsMaxQuota" {
		t.Fatalf("new reason not written: %+v", got)
	}
}

func TestPendingWriteDroppedOnAdmission(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPendingWrites(nil, nil)
	key := types.NamespacedName{Namespace: "ns", Name: "wl"}
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	p.forget(key)
	if got := drain(p, now.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("written after the workload was admitted: %+v", got)
	}
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	p.stop()
	p.note(key, "", "WaitingForQuota", now, noteOf("WaitingForQuota", "needs 4 cpu"))
	if got := drain(p, now.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("written after stop: %+v", got)
	}
}

func TestPendingWritesAreSentInOrder(t *testing.T) {
	sent := make(chan types.NamespacedName, 10)
	p := newPendingWrites(func(k types.NamespacedName, _ pendingNote, _ time.Time) { sent <- k }, time.Now)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); p.run(ctx) }()
	a, b := types.NamespacedName{Name: "a"}, types.NamespacedName{Name: "b"}
	p.note(a, "", "WaitingForQuota", time.Now(), noteOf("WaitingForQuota", "x"))
	p.note(b, "", "WaitingForQuota", time.Now(), noteOf("WaitingForQuota", "y"))
	for _, want := range []types.NamespacedName{a, b} {
		select {
		case got := <-sent:
			if got != want {
				t.Fatalf("sent %v, want %v", got, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%v never sent", want)
		}
	}
	cancel()
	<-done
}

// Notes of workloads refused for the same reason hold one copy of their
// message: tens of thousands may wait for the rate limit.
func TestWaitingNotesShareEqualMessages(t *testing.T) {
	now := time.Unix(1000, 0)
	p := newPendingWrites(nil, nil)
	built := func() pendingNote {
		return pendingNote{reason: "WaitingForQuota", message: fmt.Sprintf("insufficient unused quota for %s", "cpu")}
	}
	a, b := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}
	p.note(a, "", "WaitingForQuota", now, built)
	p.note(b, "", "WaitingForQuota", now, built)
	got := drain(p, now.Add(pendingGrace))
	if len(got) != 2 || got[0].message != "insufficient unused quota for cpu" {
		t.Fatalf("notes %+v, want both with the message", got)
	}
	if unsafe.StringData(got[0].message) != unsafe.StringData(got[1].message) {
		t.Fatal("two waiting notes hold separate copies of one message")
	}
}
