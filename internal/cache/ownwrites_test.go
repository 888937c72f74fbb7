package cache

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

func assumedOn(t *testing.T, c *Cache, key Key, rv string) {
	t.Helper()
	if err := c.Assume(&state.Admitted{Key: key, UID: "u", ClusterQueue: "cq"}, rv); err != nil {
		t.Fatal(err)
	}
}

// An admission decided on a version is written over the versions the
// scheduler's own pending writes made from it, and the informer's view of
// those versions keeps the admission assumed.
func TestOwnPendingWritesDoNotUndoAnAssumedAdmission(t *testing.T) {
	c := New(lifecycle.Options{})
	key := types.NamespacedName{Namespace: "ns", Name: "wl"}
	c.NoteOwnWrite(key, "10", "11")
	c.NoteOwnWrite(key, "11", "12")
	assumedOn(t, c, key, "10")
	if got := c.Rebase(key, "10"); got != "12" {
		t.Fatalf("Rebase(10) = %s, want 12, the last own version", got)
	}
	if got := c.Rebase(key, "11"); got != "12" {
		t.Fatalf("Rebase(11) = %s, want 12", got)
	}
	c.UpsertWorkload(pendingWL("wl", "lq", "11", "1"))
	c.UpsertWorkload(pendingWL("wl", "lq", "12", "1"))
	if !c.AssumedOn(key, "10") {
		t.Fatal("the informer's view of the scheduler's own versions undid the admission")
	}
}

// Any other change undoes the assumption, and no rebase crosses it.
func TestForeignChangeUndoesAnAssumedAdmission(t *testing.T) {
	c := New(lifecycle.Options{})
	key := types.NamespacedName{Namespace: "ns", Name: "wl"}
	c.NoteOwnWrite(key, "10", "11")
	assumedOn(t, c, key, "10")
	if got := c.Rebase(key, "9"); got != "9" {
		t.Fatalf("Rebase(9) = %s, want 9: no own write was made from it", got)
	}
	c.UpsertWorkload(pendingWL("wl", "lq", "13", "1"))
	if c.Assumed(key) {
		t.Fatal("a change by someone else left the admission assumed")
	}
	if _, held := c.state.Admitted(key); held {
		t.Fatal("the undone admission still holds quota")
	}
}

// A write made from a version outside the chain starts a new chain; an
// admission holding quota forgets the chain.
func TestOwnWriteChainRestartsAndIsForgotten(t *testing.T) {
	c := New(lifecycle.Options{})
	key := types.NamespacedName{Namespace: "ns", Name: "wl"}
	c.NoteOwnWrite(key, "10", "11")
	c.NoteOwnWrite(key, "20", "21")
	if got := c.Rebase(key, "10"); got != "10" {
		t.Fatalf("Rebase(10) = %s after a write from 20, want 10", got)
	}
	if got := c.Rebase(key, "20"); got != "21" {
		t.Fatalf("Rebase(20) = %s, want 21", got)
	}
	c.UpsertWorkload(admittedWL("wl", "lq", "22", "cq", "1"))
	if got := c.Rebase(key, "20"); got != "20" {
		t.Fatalf("Rebase(20) = %s once admitted, want 20", got)
	}
}
