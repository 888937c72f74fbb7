package runner

import (
	"testing"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/sim"
)

// A replay arrives when the run really created each workload, not on the
// schedule: late creations are late in the replay too, and a workload never
// created is not in it.
func TestReplayArrivesAtTheRealCreationTimes(t *testing.T) {
	trace := []sim.Workload{
		{Namespace: "q", Name: "a", Arrive: 0},
		{Namespace: "q", Name: "b", Arrive: 100 * time.Millisecond},
		{Namespace: "q", Name: "c", Arrive: 200 * time.Millisecond},
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	events := []driver.Event{
		{At: t0, Kind: "created", Namespace: "q", Name: "a"},
		{At: t0.Add(time.Second), Kind: "admitted", Namespace: "q", Name: "a"},
		{At: t0.Add(40 * time.Second), Kind: "created", Namespace: "q", Name: "b"},
	}
	got := replayArrivals(trace, events)
	if len(got) != 2 || got[0].Name != "a" || got[0].Arrive != 0 || got[1].Name != "b" || got[1].Arrive != 40*time.Second {
		t.Fatalf("replay %+v; want a at 0s and b at 40s (its creation's real time), c left out", got)
	}
}
