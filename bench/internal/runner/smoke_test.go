package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	"github.com/kuota-dev/kuota/bench/internal/summary"
	"github.com/kuota-dev/kuota/internal/sim"
)

// logWriter turns progress lines into test log lines.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestSmoke runs the smoke scenario end to end (control plane, manager
// built and run as a process, 240 workloads) and checks what must hold
// on any machine: every workload admitted and finished, a clean audit,
// the manager's writes counted and the results written. It asserts no
// timings.
func TestSmoke(t *testing.T) {
	if _, err := ToolsBin(); errors.Is(err, ErrNoTools) {
		t.Skipf("skipping the smoke benchmark: %v", err)
	}
	log.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := Run(ctx, Options{Scenario: "smoke", Out: out, Timeout: 2 * time.Minute, Log: logWriter{t}})
	if s != nil {
		var b strings.Builder
		if rerr := summary.Render(&b, s); rerr == nil {
			t.Logf("summary:\n%s", b.String())
		}
	}
	if err != nil {
		t.Fatalf("smoke run: %v", err)
	}
	if !s.Completed || s.Workloads != 240 || s.Created != s.Workloads || s.Finished != s.Workloads {
		t.Errorf("completed %v: %d workloads, %d created, %d finished; want all 240 created and finished",
			s.Completed, s.Workloads, s.Created, s.Finished)
	}
	if s.Admitted != s.Workloads || s.Admissions < s.Workloads {
		t.Errorf("%d workloads admitted, %d admissions; want every workload admitted at least once", s.Admitted, s.Admissions)
	}
	if s.Audit == nil || s.Audit.Error != "" || s.Audit.Violations != 0 {
		t.Errorf("audit = %+v, want no violations", s.Audit)
	}
	if len(s.Problems) > 0 {
		t.Errorf("problems: %v", s.Problems)
	}
	if s.Writes == nil || s.Writes.WorkloadWrites == 0 || s.Writes.ClusterQueueStatus == 0 {
		t.Errorf("manager writes = %+v, want writes to workloads and clusterqueues/status counted", s.Writes)
	}
	if s.TerminatedWatchers == nil {
		t.Error("the API server's count of closed watchers was not read")
	}
	checkResults(t, out)
	checkAgreement(t, out, s)
}

// checkResults reads back what the run wrote.
func checkResults(t *testing.T, out string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var back summary.Summary
	if err := yaml.UnmarshalStrict(data, &back); err != nil || !back.Completed || back.Scenario != "smoke" {
		t.Errorf("summary.yaml = %v (scenario %q, completed %v), want the smoke run, completed", err, back.Scenario, back.Completed)
	}
	for _, name := range []string{TableFile, EventsFile, UsagePlot, TTAPlot, "scenario-smoke.yaml", ReplayQueuesFile, ReplayTraceFile} {
		if info, err := os.Stat(filepath.Join(out, name)); err != nil || info.Size() == 0 {
			t.Errorf("%s: %v, want a non-empty file", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "audit.log")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("audit.log left behind: %v", err)
	}
	checkReplay(t, out)
}

// checkReplay runs the simulator on the run's replay: every workload the
// run created is in it, and finishes.
func checkReplay(t *testing.T, out string) {
	t.Helper()
	setup := readWith(t, filepath.Join(out, ReplayQueuesFile), sim.ReadSetup)
	trace := readWith(t, filepath.Join(out, ReplayTraceFile), sim.ReadTrace)
	if len(trace) != 240 || len(setup.ClusterQueues) != 4 {
		t.Fatalf("replay of %d workloads in %d ClusterQueues, want 240 in 4", len(trace), len(setup.ClusterQueues))
	}
	res, err := sim.Run(setup, trace, sim.Options{Seed: 1})
	if err != nil {
		t.Fatalf("simulating the replay: %v", err)
	}
	if res.Summary.Finished != 240 {
		t.Errorf("the replay finished %d of 240 workloads", res.Summary.Finished)
	}
}

// readWith reads a results file with a reader of its format.
func readWith[T any](t *testing.T, path string, read func(io.Reader) (T, error)) T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		t.Fatalf("reading %s: %v", filepath.Base(path), err)
	}
	return v
}

// checkAgreement checks the replay figures the run computed: the
// simulator replayed all of it, over the seeds, from the model fitted from
// the run, and the figures are what reading the replay files back and
// simulating again gives.
func checkAgreement(t *testing.T, out string, live *summary.Summary) {
	t.Helper()
	r := live.Replay
	if r == nil || r.Seeds != replaySeeds(240) || live.MeanObservedTimeToAdmission() <= 0 || r.SimulatedMeanSeconds <= 0 {
		t.Fatalf("replay check %+v; want the live and simulated figures over %d seeds", r, replaySeeds(240))
	}
	t.Logf("live: mean time to admission %.3fs, %d evictions; replayed: %.3fs, %.1f evictions (%d to %d)",
		live.MeanObservedTimeToAdmission(), live.Evictions, r.SimulatedMeanSeconds, r.SimulatedEvictions, r.SimulatedEvictionsMin, r.SimulatedEvictionsMax)
	text, err := os.ReadFile(filepath.Join(out, ReplayLatencyFile))
	if err != nil {
		t.Fatal(err)
	}
	rp := replay{setup: readWith(t, filepath.Join(out, ReplayQueuesFile), sim.ReadSetup),
		trace: readWith(t, filepath.Join(out, ReplayTraceFile), sim.ReadTrace), latency: strings.TrimSpace(string(text))}
	if lat, err := sim.ParseLatency(rp.latency); err != nil || len(lat.Phases) == 0 {
		t.Errorf("%s: %d phases (%v); want a model fitted in phases from 240 finishes", ReplayLatencyFile, len(lat.Phases), err)
	}
	again, err := simulateReplay(context.Background(), rp)
	if err != nil {
		t.Fatal(err)
	}
	if *again != *r {
		t.Errorf("the replay files simulate to %+v, the run reported %+v", again, r)
	}
}
