// Package runner runs one benchmark scenario from end to end: it starts
// the API server and etcd, the Kuota manager as a process of its own, and
// the driver that plays users and jobs; measures the run; audits the
// quota invariants at the end; stops everything; and writes the summary,
// the table and the event log into the results folder.
//
// Run is what `kuota-bench` and the smoke test call.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/bench/internal/benchenv"
	"github.com/kuota-dev/kuota/bench/internal/summary"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Defaults of Options.
const (
	DefaultTimeout      = 15 * time.Minute
	DefaultProfileSlice = 10 * time.Second
	// MaxInflight and MaxMutatingInflight are the API server's request
	// limits, well above its defaults (400 and 200) so that the server's
	// throttling does not hide the manager's own speed.
	MaxInflight         = 2000
	MaxMutatingInflight = 1000
	setupTimeout        = 2 * time.Minute
	readyTimeout        = time.Minute
	stopGrace           = 10 * time.Second
	sampleEvery         = time.Second
)

// Options configure a run.
type Options struct {
	// Scenario is a name under bench/scenarios or a path to a file.
	Scenario string
	// Root is the repository; found from the working directory when empty.
	Root string
	// Out receives the results; bench/results/<name>-<UTC time> when empty.
	Out string
	// Timeout bounds the schedule and the wait for every workload to
	// finish (DefaultTimeout when zero).
	Timeout time.Duration
	// Manager is a built kuota-manager; when empty, one is built into Out.
	Manager string
	// Pprof saves the manager's CPU profile (in ProfileSlice slices) and a
	// heap profile at the end into Out.
	Pprof        bool
	ProfileSlice time.Duration
	// LogLevel is the manager's log level (info when empty).
	LogLevel string
	// KeepAuditLog keeps the API server's audit log in Out; it is removed
	// once counted otherwise (it grows by about 1 KB per manager write).
	KeepAuditLog bool
	// Log receives progress lines (discarded when nil).
	Log io.Writer
}

// plan is a loaded scenario.
type plan struct {
	name, path string
	cfg        *scenario.Config
	plan       *scenario.Plan
	targets    *scenario.Targets
}

// Run runs the scenario and returns its summary. The error is set when the
// run could not be carried out, did not complete, or the audit failed or
// found violations; the summary is still returned (and written) whenever
// the schedule ran. Missed targets are not errors.
func Run(ctx context.Context, o Options) (*summary.Summary, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	sc, err := loadScenario(o.Root, o.Scenario)
	if err != nil {
		return nil, err
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, "bench", "results", sc.name+"-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating results folder: %w", err)
	}
	tools, err := ToolsBin()
	if err != nil {
		return nil, err
	}
	if o.Manager == "" {
		o.logf("building kuota-manager into %s", o.Out)
		if o.Manager, err = benchenv.BuildManager(o.Root, o.Out); err != nil {
			return nil, err
		}
	}
	s := &session{o: o, sc: sc, tools: tools}
	defer s.cleanup()
	in, err := s.execute(ctx)
	if err != nil {
		return nil, err
	}
	sum := summary.Compute(*in)
	rp := buildReplay(sc, in.Result.Records)
	// The run's figures are saved before the replay, which takes minutes.
	if err := writeResults(o.Out, sc, sum, in.Result, rp); err != nil {
		return sum, err
	}
	if n := len(rp.trace); n > maxReplayWorkloads {
		o.logf("the run is not replayed in the simulator (%d workloads, more than %d take long under the fitted latency model); "+
			"replay it by hand: kuota simulate --queues %[3]s/%[4]s --trace %[3]s/%[5]s --latency \"$(cat %[3]s/%[6]s)\"",
			n, maxReplayWorkloads, o.Out, ReplayQueuesFile, ReplayTraceFile, ReplayLatencyFile)
	} else {
		o.logf("replaying the run in the simulator")
		if sum.Replay, err = simulateReplay(ctx, rp); err != nil {
			o.logf("simulating the replay: %v", err)
		} else if err := writeSummary(o.Out, sum); err != nil {
			return sum, err
		}
	}
	o.logf("results in %s", o.Out)
	if ctx.Err() != nil {
		return sum, fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return sum, verdictError(sum)
}

func (o *Options) defaults() error {
	if o.Root == "" {
		root, err := paths.RepoRoot()
		if err != nil {
			return err
		}
		o.Root = root
	}
	if o.Scenario == "" {
		o.Scenario = "smoke"
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ProfileSlice == 0 {
		o.ProfileSlice = DefaultProfileSlice
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

func (o *Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, "bench: "+format+"\n", args...)
}

func loadScenario(root, nameOrPath string) (*plan, error) {
	path := scenario.Resolve(nameOrPath, filepath.Join(root, "bench", "scenarios"))
	cfg, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	targets, err := scenario.LoadTargets(path)
	if err != nil {
		return nil, err
	}
	return &plan{name: scenario.Name(path), path: path, cfg: cfg, plan: cfg.Expand(), targets: targets}, nil
}

// ErrNoTools says the control-plane binaries are missing.
var ErrNoTools = errors.New("the control-plane binaries (etcd, kube-apiserver) are missing: run 'make tools'")

// ToolsBin is the folder of etcd and kube-apiserver: $KUBEBUILDER_ASSETS
// when set, else the repository's tool cache ($KUOTA_TOOLS_BIN or
// .cache/bin). The error wraps ErrNoTools when a binary is missing.
func ToolsBin() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		var err error
		if dir, err = paths.ToolsBin(); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoTools, err)
		}
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoTools, err)
		}
	}
	return dir, nil
}

// newScheme knows the built-in kinds, CRDs and Kueue's API.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, kueue.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	return scheme, nil
}
