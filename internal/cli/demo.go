package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kuota-dev/kuota/internal/demo"
	"github.com/kuota-dev/kuota/internal/devcluster"
)

// demoFlags are the flags of `demo`, as typed by the user.
type demoFlags struct {
	clusterFlags
	keep       bool
	jobs       int
	seed       int64
	managerBin string
}

// runDemoFunc runs the demo; tests replace it.
type runDemoFunc func(context.Context, demo.Options) error

// newDemoCommand builds `demo`; run is nil outside tests.
func newDemoCommand(prog string, env Env, run runDemoFunc) *cobra.Command {
	if run == nil {
		run = demo.Run
	}
	d := devcluster.DefaultOptions(env.WorkingDir, env.UserCacheDir, env.Getenv)
	root, inCheckout := devcluster.FindRepoRoot(env.WorkingDir)
	f := demoFlags{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show Kuota at work: two teams' GPU jobs queued, borrowed, preempted, on a local cluster",
		Long: `Start a local cluster with fake GPU nodes (2 nodes gpu=a100, 2 nodes
gpu=v100, 8 nvidia.com/gpu each), install Kuota's CRDs, run kuota-manager next
to it, apply config/samples/demo-setup.yaml (two teams' ClusterQueues sharing a
Cohort, with borrowing and preemption) and submit a seeded stream of Jobs from
both teams for about a minute. A table refreshed every second shows each
queue's pending, admitted and finished workloads, the GPUs in use per flavor
and the preemptions; a summary (waits, preemptions, peak use) ends the run.

It takes about two minutes. At the end, and on Ctrl-C, the Jobs are deleted,
the manager is stopped and the cluster is deleted, unless --keep. Run it from
a checkout of Kuota after "make tools build".`,
		Example: fmt.Sprintf(`  %[1]s demo
  %[1]s demo --keep
  %[1]s demo --jobs 60 --seed 7`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !inCheckout {
				return errors.New("run the demo from a checkout of Kuota: it needs config/crd/bases and config/samples")
			}
			o := demo.Options{
				Cluster:    f.apply(d),
				Root:       root,
				ManagerBin: f.managerBin,
				StateDir:   filepath.Join(root, ".cache", "demo"),
				Stream:     demo.StreamOptions{Seed: f.seed, Jobs: f.jobs, Window: demo.DefaultWindow},
				Keep:       f.keep,
				Out:        cmd.OutOrStdout(),
				Terminal:   demo.IsTerminal(cmd.OutOrStdout(), env.Getenv),
			}
			if err := o.Stream.Validate(); err != nil {
				return fmt.Errorf("--jobs: %w", err)
			}
			if f.verbose {
				o.Cluster.Log = env.Err
			}
			return run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	addClusterFlags(fs, &f.clusterFlags, d)
	fs.BoolVar(&f.keep, "keep", false, "leave the cluster running at the end (the Jobs are deleted and the manager stopped all the same)")
	fs.IntVar(&f.jobs, "jobs", demo.DefaultJobs, fmt.Sprintf("number of Jobs to submit over the minute (%d to %d)", demo.MinJobs, demo.MaxJobs))
	fs.Int64Var(&f.seed, "seed", demo.DefaultSeed, "seed of the Job stream: the same seed gives the same Jobs")
	fs.StringVar(&f.managerBin, "manager", filepath.Join(root, "bin", "kuota-manager"), "kuota-manager binary to run (`make build` puts it in bin/)")
	return cmd
}
