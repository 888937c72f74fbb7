package runner

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/sim"
)

// Files of the replay: the run's queues and its workloads as they were
// really created, for `kuota simulate --queues replay-queues.yaml --trace
// replay.trace` (bench/README.md, "Replaying a run").
const (
	ReplayQueuesFile = "replay-queues.yaml"
	ReplayTraceFile  = "replay.trace"
)

// writeReplay writes the run's queue objects and a trace of its workloads
// with the times their creations were sent (a loaded API server makes them
// late against the schedule), so that the simulator can replay the load
// the manager really saw. Workloads never created are left out.
func writeReplay(dir string, sc *plan, events []driver.Event) error {
	setup, trace := sim.FromScenario(sc.plan, driver.DefaultFlavor)
	replay := replayArrivals(trace, events)
	var queues bytes.Buffer
	if err := sim.WriteSetup(&queues, setup); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReplayQueuesFile), queues.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", ReplayQueuesFile, err)
	}
	var out bytes.Buffer
	if err := sim.WriteTrace(&out, replay); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ReplayTraceFile), out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", ReplayTraceFile, err)
	}
	return nil
}

// replayArrivals gives each workload of the trace the time its creation
// was sent, from the first creation of the run, and leaves out those never
// created.
func replayArrivals(trace []sim.Workload, events []driver.Event) []sim.Workload {
	created := map[string]time.Time{}
	var first time.Time
	for _, e := range events {
		if e.Kind != "created" {
			continue
		}
		created[e.Namespace+"/"+e.Name] = e.At
		if first.IsZero() || e.At.Before(first) {
			first = e.At
		}
	}
	replay := make([]sim.Workload, 0, len(trace))
	for _, w := range trace {
		if at, ok := created[w.Namespace+"/"+w.Name]; ok {
			w.Arrive = at.Sub(first)
			replay = append(replay, w)
		}
	}
	return replay
}
