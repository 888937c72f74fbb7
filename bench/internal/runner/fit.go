package runner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
)

// ReplayLatencyFile holds the latency model fitted from the run, for
// `kuota simulate --latency "$(cat replay.latency)"`.
const ReplayLatencyFile = "replay.latency"

const (
	// fitPoints is how many quantiles a fitted distribution keeps (every
	// 10%).
	fitPoints = 11
	// phaseSamples is how many measurements a phase of the fitted model
	// is drawn from, at least; maxPhases bounds the phases.
	phaseSamples = 12
	maxPhases    = 100
)

// sample is what one Finished write of the harness measured, and when.
type sample struct {
	at                     time.Duration
	admit, observe, finish time.Duration
}

// fitLatency estimates, from the harness's own clocks, the latency model
// under which the simulator replays the run. The manager's decisions are
// not timed by the harness, so each part is built from what the harness
// timed on its own requests, which go to the same API server (when the
// manager saw each workload is in the replay's trace, replayArrivals):
//
//   - admit: a status write's round trip (the harness's Finished writes;
//     the manager's admission writes are of the same kind and size);
//   - observe: a written status to its watch event in the harness (the
//     job side notices an admission);
//   - evict: a round trip (the manager sees its eviction land);
//   - finish: a job's due end (its admission seen plus its runtime) to its
//     Finished write answered: the harness's lag and the write.
//
// The manager is taken to see a write once it is answered. The harness's
// own watch, which does much more per event on a loaded machine, brought
// writes 0.5 to 5 s later on the baseline scenario (2026-12-04); counting
// that in when the manager sees finishes and creations made replays of
// the baseline admit 41% later than the live run, and 10% sooner without.
//
// A loaded API server is slow in bursts (on the smoke scenario, writes
// took 20 ms at the start and 300 ms when the small workloads all finished
// at the end), and drawing every latency from one distribution would slow
// down the quiet stretches and speed up the busy ones. So the run is cut
// into phases of equally many writes, each with its own distributions.
func fitLatency(records []driver.Record) string {
	var first time.Time
	for i := range records {
		if s := records[i].CreateSent; !s.IsZero() && (first.IsZero() || s.Before(first)) {
			first = s
		}
	}
	var samples []sample
	for i := range records {
		r := &records[i]
		if r.FinishSent.IsZero() || r.FinishDone.IsZero() || r.Finished.IsZero() || len(r.Admissions) == 0 {
			continue
		}
		due := r.Admissions[len(r.Admissions)-1].Observed.Add(r.Plan.Runtime)
		samples = append(samples, sample{at: r.FinishSent.Sub(first), admit: r.FinishDone.Sub(r.FinishSent),
			observe: r.Finished.Sub(r.FinishDone), finish: r.FinishDone.Sub(due)})
	}
	if len(samples) < phaseSamples {
		return "" // too few to fit: zero latency
	}
	slices.SortFunc(samples, func(a, b sample) int { return int(a.at - b.at) })
	phases := min(len(samples)/phaseSamples, maxPhases)
	segments := make([]string, 0, phases)
	var from time.Duration
	for p := range phases {
		chunk := samples[p*len(samples)/phases : (p+1)*len(samples)/phases]
		pick := func(f func(sample) time.Duration) string {
			xs := make([]time.Duration, len(chunk))
			for i, s := range chunk {
				xs[i] = f(s)
			}
			return quantiles(xs)
		}
		rtt := pick(func(s sample) time.Duration { return s.admit })
		seg := fmt.Sprintf("admit=%s,evict=%s,observe=%s,finish=%s", rtt, rtt,
			pick(func(s sample) time.Duration { return s.observe }), pick(func(s sample) time.Duration { return s.finish }))
		if p > 0 {
			// Phases must start in ascending order, also once rounded.
			from = max(chunk[0].at.Round(time.Millisecond), from+time.Millisecond)
			seg = fmt.Sprintf("from=%s,%s", from, seg)
		}
		segments = append(segments, seg)
	}
	return strings.Join(segments, ";")
}

// quantiles writes a sample as a quantiles distribution (negative values,
// from clocks read out of order, count as zero).
func quantiles(xs []time.Duration) string {
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	points := make([]string, fitPoints)
	for i := range points {
		// Linear interpolation between order statistics.
		pos := float64(i) * float64(len(sorted)-1) / float64(fitPoints-1)
		lo := int(pos)
		hi := min(lo+1, len(sorted)-1)
		v := sorted[lo] + time.Duration((pos-float64(lo))*float64(sorted[hi]-sorted[lo]))
		points[i] = fmt.Sprint(max(v, 0).Round(time.Microsecond))
	}
	return "quantiles:" + strings.Join(points, "/")
}
