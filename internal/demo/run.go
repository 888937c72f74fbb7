package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
)

// Timeouts of the steps around the stream.
const (
	DefaultDrain   = time.Minute
	upTimeout      = 3 * time.Minute
	webhookTimeout = 90 * time.Second
	setupTimeout   = time.Minute
	cleanupTimeout = 90 * time.Second
	// keepTimeout bounds the wait, with --keep, for the manager to let go
	// of the deleted Jobs' Workloads before it stops.
	keepTimeout = 20 * time.Second
)

// ErrInterrupted is returned when the context ended (Ctrl-C) before the
// demo did; everything was cleaned up.
var ErrInterrupted = errors.New("interrupted")

// Options of a demo run.
type Options struct {
	// Cluster names the cluster and its folders; ClusterOptions gives it
	// the demo's nodes.
	Cluster devcluster.Options
	// Root is the checkout of Kuota that holds the CRDs and the setup.
	Root string
	// ManagerBin is the kuota-manager binary (`make build` puts it in bin/).
	ManagerBin string
	// StateDir receives the manager's Configuration, certificates and log.
	StateDir string
	Stream   StreamOptions
	// Drain is how long the Jobs may take to finish after the stream's
	// window before the demo gives up.
	Drain time.Duration
	// Keep leaves the cluster running at the end.
	Keep bool
	Out  io.Writer
	// Terminal redraws the live table in place; otherwise it prints a line
	// per second.
	Terminal bool
}

// run is the state of one demo run, for the cleanup.
type run struct {
	o     Options
	start time.Time
	tools devcluster.Tools
	// existed: the cluster was there before the demo; it is not deleted.
	existed    bool
	kubeconfig string
	client     client.WithWatch
	manager    *manager
	// lastQueues are the teams' ClusterQueues of the last good poll.
	lastQueues []kueue.ClusterQueue
}

// Run runs the demo (see the package comment) and cleans up, also when ctx
// ends early, in which case it returns ErrInterrupted.
func Run(ctx context.Context, o Options) (err error) {
	jobs, err := Stream(o.Stream)
	if err != nil {
		return err
	}
	if o.Drain <= 0 {
		o.Drain = DefaultDrain
	}
	o.Cluster = ClusterOptions(o.Cluster)
	if err := o.Cluster.Validate(); err != nil {
		return err
	}
	r := &run{o: o, start: time.Now()}
	if r.tools, err = devcluster.LocateTools(o.Cluster.ToolsBin); err != nil {
		return fmt.Errorf("%w (run `make tools`)", err)
	}
	if _, err := os.Stat(o.ManagerBin); err != nil {
		return fmt.Errorf("kuota-manager: %w (run `make build`)", err)
	}
	r.intro(jobs)
	defer func() {
		if ctx.Err() != nil {
			err = ErrInterrupted
		}
		err = errors.Join(err, r.cleanup())
	}()
	if err := r.setUp(ctx); err != nil {
		return err
	}
	return r.stream(ctx, jobs)
}

func (r *run) printf(format string, args ...any) {
	fmt.Fprintf(r.o.Out, format, args...)
}

// step prints the outcome of a step of the set-up.
func (r *run) step(label, format string, args ...any) {
	r.printf("  %-8s %s\n", label, fmt.Sprintf(format, args...))
}

// rel shows a path relative to the checkout when it is inside it.
func (r *run) rel(path string) string {
	if rel, err := filepath.Rel(r.o.Root, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func (r *run) intro(jobs []JobSpec) {
	r.printf(`Kuota demo: two teams share %d fake GPUs (%s) through a cohort.
team-a starts a sweep of low-priority jobs and borrows team-b's idle GPUs;
team-b then wants its GPUs back and reclaims them by preemption; urgent
high-priority jobs preempt their own team's low-priority work; mixed traffic
from both teams follows. %d jobs over %s; Ctrl-C stops and cleans up.

`, CapacityGPUs(), gpuKindsText(), len(jobs), r.o.Stream.Window)
}

func gpuKindsText() string {
	parts := make([]string, 0, len(GPUKinds))
	for _, k := range GPUKinds {
		parts = append(parts, fmt.Sprintf("%d %s", gpuNodes*gpusPerNode, k))
	}
	return strings.Join(parts, ", ")
}

// setUp starts the cluster and the manager and applies the sample setup.
func (r *run) setUp(ctx context.Context) error {
	var err error
	if r.existed, err = devcluster.ClusterExists(r.o.Cluster); err != nil {
		return err
	}
	upCtx, cancel := context.WithTimeout(ctx, upTimeout)
	res, err := devcluster.Up(upCtx, r.o.Cluster)
	cancel()
	if err != nil {
		return fmt.Errorf("starting the cluster: %w", err)
	}
	r.kubeconfig = res.Kubeconfig
	r.step("cluster", "%s in %s: %d fake nodes (%s), API server %s", res.Action,
		res.Elapsed.Round(100*time.Millisecond), len(res.Nodes), strings.Join(res.Nodes, ", "), res.Server)
	if r.client, err = newClient(r.kubeconfig); err != nil {
		return err
	}
	if err := installCRDs(ctx, r.tools.Kubectl, r.kubeconfig, r.o.Root); err != nil {
		return err
	}
	r.step("CRDs", "installed from %s", CRDDir)
	started := time.Now()
	if r.manager, err = startManager(r.o.ManagerBin, r.o.StateDir, r.kubeconfig); err != nil {
		return err
	}
	if err := r.manager.waitWebhooks(ctx, r.client, webhookTimeout); err != nil {
		return err
	}
	r.step("manager", "kuota-manager running (pid %d, log %s), webhooks answering after %s",
		r.manager.cmd.Process.Pid, r.rel(r.manager.logPath), time.Since(started).Round(100*time.Millisecond))
	if err := applySetup(ctx, r.client, r.tools.Kubectl, r.kubeconfig, r.o.Root, setupTimeout); err != nil {
		return err
	}
	r.step("setup", "%s applied: flavors %s, ClusterQueues %s active", SetupFile,
		strings.Join(GPUKinds, ", "), teamQueuesText())
	// Jobs of an earlier run that was killed would clash by name.
	if err := deleteJobs(ctx, r.client); err != nil {
		return err
	}
	return waitGone(ctx, r.client, &batchv1.JobList{}, true, setupTimeout)
}

func teamQueuesText() string {
	names := make([]string, 0, len(Teams))
	for _, t := range Teams {
		names = append(names, t.ClusterQueue)
	}
	return strings.Join(names, ", ")
}

// cleanup deletes the Jobs, stops the manager and deletes the cluster
// unless Keep (or it was there before the demo). The Jobs go first, while
// the manager still runs and can release their Workloads.
func (r *run) cleanup() error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var errs []error
	var done []string
	if r.client != nil {
		if err := deleteJobs(ctx, r.client); err != nil {
			errs = append(errs, err)
		} else {
			done = append(done, "Jobs deleted")
		}
		if r.o.Keep && r.manager != nil && r.manager.exited() == nil {
			// Best effort: left-over Workloads go once a manager runs again.
			_ = waitGone(ctx, r.client, &kueue.WorkloadList{}, false, keepTimeout)
		}
	}
	if r.manager != nil {
		if err := r.manager.stop(); err != nil {
			errs = append(errs, err)
		} else {
			done = append(done, "manager stopped")
		}
	}
	if r.o.Keep || r.existed {
		defer r.kept()
	} else {
		if err := devcluster.Down(ctx, r.o.Cluster); err != nil {
			errs = append(errs, fmt.Errorf("deleting the cluster: %w", err))
		} else {
			done = append(done, "cluster deleted")
		}
	}
	if len(done) > 0 {
		r.printf("\nCleaned up: %s.\n", strings.Join(done, ", "))
	}
	return errors.Join(errs...)
}

// kept says where the cluster that stays is.
func (r *run) kept() {
	why := "--keep"
	if r.existed && !r.o.Keep {
		why = "it was running before the demo"
	}
	stop := "make demo-down"
	if r.o.Cluster.Name != devcluster.DefaultName {
		stop = fmt.Sprintf("kuota dev down --name %s --workdir %s", r.o.Cluster.Name, r.o.Cluster.WorkDir)
	}
	r.printf("The cluster %q is still running (%s):\n\n  export KUBECONFIG=%s\n\nStop it with `%s`.\n",
		r.o.Cluster.Name, why, r.o.Cluster.KubeconfigPath(), stop)
}
