package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/scenario"
	"github.com/kuota-dev/kuota/internal/sim"
)

// A replay arrives when the run really sent each create request, not on
// the schedule, and is seen when its create request was answered (not when
// the harness's own watch brought it, later on a loaded machine): late
// creations are late in the replay too, and a workload never created is
// not in it.
func TestReplayArrivesAtTheRealCreationTimes(t *testing.T) {
	trace := []sim.Workload{
		{Namespace: "q", Name: "a", Arrive: 0},
		{Namespace: "q", Name: "b", Arrive: 100 * time.Millisecond},
		{Namespace: "q", Name: "c", Arrive: 200 * time.Millisecond},
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	records := []driver.Record{
		{Plan: scenario.Workload{Queue: "q", Name: "a"}, CreateSent: t0, Created: t0.Add(time.Second), FirstSeen: t0.Add(1500 * time.Millisecond)},
		{Plan: scenario.Workload{Queue: "q", Name: "b"}, CreateSent: t0.Add(40 * time.Second), Created: t0.Add(41 * time.Second)},
		{Plan: scenario.Workload{Queue: "q", Name: "c"}, CreateSent: t0.Add(time.Second)}, // never answered
	}
	got := replayArrivals(trace, records)
	if len(got) != 2 || got[0].Name != "a" || got[0].Arrive != 0 || got[0].SeenAfter != time.Second ||
		got[1].Name != "b" || got[1].Arrive != 40*time.Second {
		t.Fatalf("replay %+v; want a at 0s seen 1s later (its create answered) and b at 40s (its creation's real time), c left out", got)
	}
}

// The fitted model reads each part from the harness's own clocks, in
// phases of equally many writes, and parses as a latency model whose
// means are the measured ones.
func TestFitLatencyFromTheHarnessClocks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	var records []driver.Record
	for i := range 2 * phaseSamples {
		// Admission seen at 100+i ms (plus 5s for the second half),
		// runtime 200ms, so due 300ms later; the Finished write goes out
		// 10ms late, takes 30ms (ten times as long in the second half),
		// and its watch event comes 5ms after.
		start, rtt := 100+i, 30
		if i >= phaseSamples {
			start, rtt = 5100+i, 300
		}
		sent := start + 210
		done := sent + rtt
		records = append(records, driver.Record{
			Plan:       scenario.Workload{Queue: "q", Name: fmt.Sprint(i), Runtime: 200 * time.Millisecond},
			CreateSent: ms(0), Created: ms(15), FirstSeen: ms(20),
			Admissions: []driver.Admission{{Observed: ms(start)}},
			FinishSent: ms(sent), FinishDone: ms(done), Finished: ms(done + 5),
		})
	}
	// A workload finished by another write adds nothing.
	records = append(records, driver.Record{CreateSent: ms(0), FirstSeen: ms(20)})
	text := fitLatency(records)
	lat, err := sim.ParseLatency(text)
	if err != nil {
		t.Fatalf("the fitted model %q does not parse: %v", text, err)
	}
	if from := time.Duration(5310+phaseSamples) * time.Millisecond; len(lat.Phases) != 1 || lat.Phases[0].From != from {
		t.Fatalf("fitted %q; want a second phase from %s, when the slow writes began", text, from)
	}
	mean := func(d sim.Dist) time.Duration { return d.Mean().Round(100 * time.Microsecond) }
	for _, c := range []struct {
		name string
		got  sim.Dist
		want time.Duration
	}{
		{"admit", lat.Admit, 30 * time.Millisecond},
		{"observe", lat.Observe, 5 * time.Millisecond},
		{"evict", lat.Evict, 30 * time.Millisecond},
		{"finish", lat.Finish, 40 * time.Millisecond},
		{"admit later", lat.Phases[0].Admit, 300 * time.Millisecond},
		{"finish later", lat.Phases[0].Finish, 310 * time.Millisecond},
	} {
		if mean(c.got) != c.want {
			t.Errorf("%s: mean %v, want %v (model %s)", c.name, mean(c.got), c.want, text)
		}
	}
	if few := fitLatency(records[:phaseSamples-1]); few != "" {
		t.Errorf("%d measurements fitted as %q, want no model (zero latency)", phaseSamples-1, few)
	}
}
