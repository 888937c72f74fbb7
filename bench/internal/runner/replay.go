package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/bench/internal/summary"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/sim"
)

// Files of the replay: the run's queues and its workloads as they were
// really created, for `kuota simulate --queues replay-queues.yaml --trace
// replay.trace` (bench/README.md, "Replaying a run").
const (
	ReplayQueuesFile = "replay-queues.yaml"
	ReplayTraceFile  = "replay.trace"
)

// replay is the run as the simulator replays it: its queues, its
// workloads as they were really created and seen, and the latency model
// fitted from it.
type replay struct {
	setup   *sim.Setup
	trace   []sim.Workload
	latency string
}

// buildReplay makes the replay of a run (replayArrivals, fitLatency).
// Workloads never created are left out.
func buildReplay(sc *plan, records []driver.Record) replay {
	setup, trace := sim.FromScenario(sc.plan, driver.DefaultFlavor)
	return replay{setup: setup, trace: replayArrivals(trace, records), latency: fitLatency(records)}
}

// writeReplay writes the replay's files.
func writeReplay(dir string, rp replay) error {
	var queues bytes.Buffer
	if err := sim.WriteSetup(&queues, rp.setup); err != nil {
		return err
	}
	var out bytes.Buffer
	if err := sim.WriteTrace(&out, rp.trace); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{{ReplayQueuesFile, queues.Bytes()}, {ReplayTraceFile, out.Bytes()}, {ReplayLatencyFile, []byte(rp.latency + "\n")}}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	return nil
}

// maxReplayWorkloads bounds the runs the harness replays itself: a
// replay of the large-scale scenario (50,000 workloads) under its fitted
// latency model ran for more than 25 minutes of one core on this machine,
// against 40 s for the baseline's 15,000.
const maxReplayWorkloads = 20000

// replaySeeds is how many seeds of the fitted latency model the replay is
// simulated with: up to 20, fewer for large runs (about 60,000 simulated
// workloads in all).
func replaySeeds(workloads int) int { return max(1, min(20, 60000/max(workloads, 1))) }

// simulateReplay replays the run in the simulator under the fitted
// latency model and the manager's default patience: its figures, set
// beside the run's, show how far the simulator explains the run.
func simulateReplay(ctx context.Context, rp replay) (*summary.ReplayCheck, error) {
	lat, err := sim.ParseLatency(rp.latency)
	if err != nil {
		return nil, fmt.Errorf("the fitted latency model: %w", err)
	}
	seeds := replaySeeds(len(rp.trace))
	check := &summary.ReplayCheck{Seeds: seeds}
	for seed := range uint64(seeds) {
		res, err := sim.Run(rp.setup, rp.trace, sim.Options{Seed: seed + 1, Latency: lat, Context: ctx,
			Scheduling: scheduling.Options{Patience: scheduling.DefaultPatience}})
		if err != nil {
			return nil, err
		}
		n := res.Summary.Evictions
		if seed == 0 || n < check.SimulatedEvictionsMin {
			check.SimulatedEvictionsMin = n
		}
		check.SimulatedEvictionsMax = max(check.SimulatedEvictionsMax, n)
		check.SimulatedEvictions += float64(n) / float64(seeds)
		check.SimulatedMeanSeconds += meanTimeToStart(res) / float64(seeds)
	}
	return check, nil
}

// meanTimeToStart is the simulated mean time from a workload's creation
// to its job starting under its last admission: what the harness measures
// live (create request sent to the admission seen).
func meanTimeToStart(res *sim.Result) float64 {
	var sum float64
	n := 0
	for _, w := range res.Workloads {
		if k := len(w.Admissions); k > 0 {
			sum += (w.Admissions[k-1].Started - w.Arrive).Seconds()
			n++
		}
	}
	return sum / float64(max(n, 1))
}

// replayArrivals gives each workload of the trace the time its create
// request was sent, from the first one of the run, and the delay until it
// was answered (the manager sees it about then; see fitLatency), and
// leaves out those never created.
func replayArrivals(trace []sim.Workload, records []driver.Record) []sim.Workload {
	byName := map[string]*driver.Record{}
	var first time.Time
	for i := range records {
		r := &records[i]
		if r.CreateSent.IsZero() || r.Created.IsZero() {
			continue
		}
		byName[r.Plan.Queue+"/"+r.Plan.Name] = r
		if first.IsZero() || r.CreateSent.Before(first) {
			first = r.CreateSent
		}
	}
	replay := make([]sim.Workload, 0, len(trace))
	for _, w := range trace {
		r, ok := byName[w.Namespace+"/"+w.Name]
		if !ok {
			continue
		}
		w.Arrive = r.CreateSent.Sub(first)
		w.SeenAfter = max(r.Created.Sub(r.CreateSent), 0)
		replay = append(replay, w)
	}
	return replay
}
