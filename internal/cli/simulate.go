package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/internal/plots"
	"github.com/kuota-dev/kuota/internal/scenario"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/settings"
	"github.com/kuota-dev/kuota/internal/sim"
)

// simulateFlags are the flags of `simulate`, as typed by the user.
type simulateFlags struct {
	scenario, queues, trace string
	config                  string
	latency                 string
	patience                time.Duration
	seed                    uint64
	output                  string
	events                  string
	plots                   string
	deadline                time.Duration
}

func newSimulateCommand(prog string, env Env) *cobra.Command {
	f := simulateFlags{output: "table", patience: scheduling.DefaultPatience}
	cmd := &cobra.Command{
		Use:   "simulate",
		Short: "Run the scheduling core over a workload trace in virtual time",
		Long: `Run Kuota's scheduling core (the manager's own queues, flavor assignment,
preemption and fair sharing) over a workload trace in virtual time, with no
cluster, and print the figures kuota-bench prints: time to admission per
class, quota usage, evictions by reason, admissions.

The load is either a benchmark scenario (--scenario: a name in
bench/scenarios or a generator file in Kueue's format), or a queue
configuration (--queues: Kueue's YAML, as applied to a cluster) with a trace
(--trace: JSON Lines, one workload a line; kuota trace export writes one
from a live cluster). --latency models the API server and the jobs:
name=distribution pairs, names admit, evict, observe, finish and cycle,
distributions 50ms, fixed:50ms, uniform:10ms-200ms, exp:100ms or
quantiles:1ms/5ms/40ms (values at equally spaced probabilities), zero by
default: the policy's own limit; jobs=N, a job side of N workers writing
the jobs' ends one at a time, each taking a jobwrite=DIST sample (Kueue's
scalability runner has 5); stall=START+DURATION spans in which
nothing lands (e.g. stall=150s+15s); and phases after semicolons, each
from=DURATION and its own pairs (admit=20ms;from=60s,admit=300ms).
kuota-bench writes each run's replay (replay-queues.yaml, replay.trace)
and the model fitted from it (replay.latency). --config reads a Kueue
Configuration file as the manager does: its fairSharing (weights then
count), admissionFairSharing and resources settings apply. The same seed
gives the same run.`,
		Example: fmt.Sprintf(`  %[1]s simulate --scenario baseline
  %[1]s simulate --scenario one-cohort --latency admit=exp:40ms,evict=exp:40ms,finish=exp:40ms --output json
  %[1]s simulate --queues new-queues.yaml --trace last-week.trace --patience 30s
  %[1]s simulate --queues new-queues.yaml --trace last-week.trace --config controller_manager_config.yaml
  %[1]s simulate --queues R/replay-queues.yaml --trace R/replay.trace --latency "$(cat R/replay.latency)"`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSimulate(cmd.OutOrStdout(), env, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "benchmark scenario: a name in bench/scenarios or a generator file")
	fl.StringVar(&f.queues, "queues", "", "queue configuration: Kueue's YAML (ResourceFlavors, Cohorts, ClusterQueues, LocalQueues, ...)")
	fl.StringVar(&f.trace, "trace", "", "workload trace (JSON Lines), with --queues")
	fl.StringVar(&f.config, "config", "", "Kueue Configuration file whose fairSharing, admissionFairSharing and resources (transformations, excludeResourcePrefixes, quotaCheckStrategy) apply, as in the manager")
	fl.StringVar(&f.latency, "latency", "", "latency model, e.g. admit=exp:40ms,evict=exp:40ms,observe=10ms,finish=exp:40ms,cycle=5ms")
	fl.DurationVar(&f.patience, "patience", f.patience, "wait instead of preempting workloads expected to end within this (0: preempt as Kueue does)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed of the latency model")
	fl.StringVarP(&f.output, "output", "o", f.output, "output format: table or json")
	fl.StringVar(&f.events, "events", "", "write the event log (JSON Lines) to this file")
	fl.DurationVar(&f.deadline, "deadline", 0, "stop at this virtual time (0: when every workload finished)")
	fl.StringVar(&f.plots, "plots", "", "write usage.svg and time-to-admission.svg into this folder")
	return cmd
}

func runSimulate(out io.Writer, env Env, f simulateFlags) error {
	if f.output != "table" && f.output != "json" {
		return fmt.Errorf("--output must be table or json, got %q", f.output)
	}
	if f.patience < 0 || f.deadline < 0 {
		return errors.New("--patience and --deadline must not be negative")
	}
	latency, err := sim.ParseLatency(f.latency)
	if err != nil {
		return fmt.Errorf("--latency: %w", err)
	}
	setup, trace, kueueRef, err := loadSimulation(env, f)
	if err != nil {
		return err
	}
	opts := sim.Options{Latency: latency, Seed: f.seed, Deadline: f.deadline,
		Scheduling: scheduling.Options{Patience: f.patience}}
	if f.config != "" {
		cfg, err := configapi.Load(f.config)
		if err != nil {
			return fmt.Errorf("--config: %w", err)
		}
		opts.Scheduling = settings.Scheduling(cfg, f.patience)
		opts.Lifecycle = settings.Workloads(cfg)
		opts.FairAdmission = settings.AdmissionFairSharing(cfg)
	}
	if f.events != "" {
		file, err := os.Create(f.events)
		if err != nil {
			return fmt.Errorf("--events: %w", err)
		}
		defer file.Close()
		opts.Events = file
	}
	res, err := sim.Run(setup, trace, opts)
	if err != nil {
		return err
	}
	if f.plots != "" {
		if err := writeSimPlots(f.plots, res, kueueRef); err != nil {
			return err
		}
	}
	if f.output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res.Summary)
	}
	return sim.Render(out, &res.Summary)
}

// loadSimulation reads the setup and trace the flags name, and for a
// scenario Kueue's figures when its targets file has them.
func loadSimulation(env Env, f simulateFlags) (*sim.Setup, []sim.Workload, *scenario.Reference, error) {
	switch {
	case f.scenario != "" && (f.queues != "" || f.trace != ""):
		return nil, nil, nil, errors.New("give either --scenario or --queues with --trace, not both")
	case f.scenario != "":
		path := scenario.Resolve(f.scenario, scenarioDir(env))
		cfg, err := scenario.Load(path)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("--scenario: %w", err)
		}
		var ref *scenario.Reference
		if t, err := scenario.LoadTargets(path); err == nil && t != nil {
			ref = t.Kueue
		}
		setup, trace := sim.FromScenario(cfg.Expand(), "bench-flavor")
		return setup, trace, ref, nil
	case f.queues == "" || f.trace == "":
		return nil, nil, nil, errors.New("give --scenario, or --queues and --trace")
	}
	qf, err := os.Open(f.queues)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--queues: %w", err)
	}
	defer qf.Close()
	setup, err := sim.ReadSetup(qf)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--queues %s: %w", f.queues, err)
	}
	tf, err := os.Open(f.trace)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--trace: %w", err)
	}
	defer tf.Close()
	trace, err := sim.ReadTrace(tf)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--trace %s: %w", f.trace, err)
	}
	return setup, trace, nil, nil
}

// writeSimPlots draws a simulation's usage and times to admission.
func writeSimPlots(dir string, res *sim.Result, ref *scenario.Reference) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--plots: %w", err)
	}
	if err := plots.WriteUsage(filepath.Join(dir, "usage.svg"), "Quota usage (simulated)", res.Usage); err != nil {
		return err
	}
	times := res.TimesToAdmission()
	var dists []plots.Distribution
	for _, l := range res.Summary.TimeToAdmission {
		d := plots.Distribution{Class: l.Class, Values: times[l.Class]}
		if ref != nil {
			if m, ok := ref.MeanTimeToAdmissionSeconds[l.Class]; ok {
				d.KueueMean = &m
			}
		}
		dists = append(dists, d)
	}
	return plots.WriteTimeToAdmission(filepath.Join(dir, "time-to-admission.svg"), "Time to admission (simulated)", dists)
}

// scenarioDir is where scenario names are looked up: bench/scenarios in the
// working directory, else in the repository the working directory is in.
func scenarioDir(env Env) string {
	dir := filepath.Join(env.WorkingDir, "bench", "scenarios")
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	if root, err := paths.RepoRoot(); err == nil {
		return filepath.Join(root, "bench", "scenarios")
	}
	return dir
}
