package devcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Action says what Up had to do to get a running cluster.
type Action string

// Actions reported by Up.
const (
	ActionCreated Action = "created"
	ActionStarted Action = "started"
	ActionReused  Action = "reused"
)

const (
	// readyTimeout bounds the wait for the API server and the default
	// ServiceAccount after kwokctl returns.
	readyTimeout = 2 * time.Minute
	// probeTimeout bounds the request that tells a running cluster from a
	// stopped one.
	probeTimeout = 2 * time.Second
	// kwokctlWaitDelay lets kwokctl's output pipes close after it exits even
	// if a process it forked kept them open.
	kwokctlWaitDelay = 5 * time.Second
	// outputTailLines of kwokctl's output go into its errors.
	outputTailLines = 25
)

// Result describes the cluster Up left running.
type Result struct {
	Name       string
	Kubeconfig string
	// Server is the API server URL, e.g. https://127.0.0.1:6443.
	Server string
	Action Action
	// Nodes are the names of the fake nodes, in creation order.
	Nodes   []string
	Elapsed time.Duration
}

// Up makes sure the cluster described by o runs and has the wanted fake
// nodes, creating or starting it as needed. See the package comment.
func Up(ctx context.Context, o Options) (Result, error) {
	start := time.Now()
	o, err := o.absolute()
	if err != nil {
		return Result{}, err
	}
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	tools, err := LocateTools(o.ToolsBin)
	if err != nil {
		return Result{}, err
	}
	k := kwokctl{path: tools.Kwokctl, env: KwokctlEnv(os.Environ(), o, tools.Kubectl), log: o.Log}
	action, cfg, cs, err := runReady(ctx, o, tools, k)
	if err != nil && action == ActionCreated {
		// A cluster just created whose API server never answered (seen
		// once on a loaded machine): delete it and create it once more.
		if o.Log != nil {
			fmt.Fprintf(o.Log, "%v\ndeleting the cluster and creating it again\n", err)
		}
		if derr := Down(ctx, o); derr != nil {
			return Result{}, fmt.Errorf("%w; deleting it: %v", err, derr)
		}
		action, cfg, cs, err = runReady(ctx, o, tools, k)
	}
	if err != nil {
		return Result{}, err
	}
	nodes, err := reconcileNodes(ctx, cs, o.DesiredNodes())
	if err != nil {
		return Result{}, fmt.Errorf("cluster %q: %w", o.Name, err)
	}
	return Result{
		Name:       o.Name,
		Kubeconfig: o.KubeconfigPath(),
		Server:     cfg.Host,
		Action:     action,
		Nodes:      nodes,
		Elapsed:    time.Since(start),
	}, nil
}

// runReady makes sure the cluster runs and waits until its API server is
// ready. An API server that does not get ready has its log's tail in the
// error.
func runReady(ctx context.Context, o Options, tools Tools, k kwokctl) (Action, *rest.Config, *kubernetes.Clientset, error) {
	action, err := ensureRunning(ctx, o, tools, k)
	if err != nil {
		return action, nil, nil, err
	}
	cfg, err := restConfig(o.KubeconfigPath())
	if err != nil {
		return action, nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return action, nil, nil, fmt.Errorf("client for cluster %q: %w", o.Name, err)
	}
	if err := waitReady(ctx, cs, readyTimeout); err != nil {
		return action, nil, nil, fmt.Errorf("cluster %q (%s): %w%s", o.Name, cfg.Host, err, apiServerLogTail(o))
	}
	return action, cfg, cs, nil
}

// apiServerLogTail is the end of the cluster's kube-apiserver log, as a
// suffix for an error ("" when there is none).
func apiServerLogTail(o Options) string {
	data, err := os.ReadFile(filepath.Join(o.clusterDir(), "logs", "kube-apiserver.log"))
	if err != nil || len(data) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > outputTailLines {
		lines = lines[len(lines)-outputTailLines:]
	}
	return "\nkube-apiserver log (last lines):\n" + strings.Join(lines, "\n")
}

// Down deletes the cluster and all its files. A cluster that does not exist
// is not an error.
func Down(ctx context.Context, o Options) error {
	o, err := o.absolute()
	if err != nil {
		return err
	}
	exists, err := ClusterExists(o)
	if err != nil || !exists {
		return err
	}
	path, err := kwokctlPath(o.ToolsBin)
	if err != nil {
		return err
	}
	kubectl := filepath.Join(filepath.Dir(path), "kubectl")
	if checkExecutable(kubectl) != nil {
		kubectl = ""
	}
	k := kwokctl{path: path, env: KwokctlEnv(os.Environ(), o, kubectl), log: o.Log}
	if err := k.run(ctx, DeleteClusterArgs(o)...); err != nil {
		return err
	}
	if err := os.Remove(o.stagesFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the kwok stages: %w", err)
	}
	return nil
}

// ClusterExists reports whether kwokctl has a cluster named o.Name in o.WorkDir.
func ClusterExists(o Options) (bool, error) {
	_, err := os.Stat(filepath.Join(o.clusterDir(), "kwok.yaml"))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("cluster %q: %w", o.Name, err)
	}
}

// absolute makes the folders absolute: kwokctl and the processes it forks
// run from other directories.
func (o Options) absolute() (Options, error) {
	var err error
	if o.WorkDir, err = absPath(o.WorkDir); err != nil {
		return o, fmt.Errorf("work dir: %w", err)
	}
	if o.ToolsBin, err = absPath(o.ToolsBin); err != nil {
		return o, fmt.Errorf("tools bin: %w", err)
	}
	return o, nil
}

func absPath(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	return filepath.Abs(p)
}

// ensureRunning creates, starts or reuses the cluster.
func ensureRunning(ctx context.Context, o Options, tools Tools, k kwokctl) (Action, error) {
	exists, err := ClusterExists(o)
	if err != nil {
		return "", err
	}
	if !exists {
		if o.Port > 0 {
			if err := CheckPortFree(o.Port); err != nil {
				return "", err
			}
		}
		if err := os.MkdirAll(filepath.Dir(o.stagesFile()), 0o750); err != nil {
			return "", fmt.Errorf("work dir: %w", err)
		}
		if err := os.WriteFile(o.stagesFile(), []byte(Stages(o.PodRuntime)+"---\n"+o.AggregationConfig()), 0o600); err != nil {
			return "", fmt.Errorf("writing the kwok stages: %w", err)
		}
		if err := k.run(ctx, CreateClusterArgs(o, tools)...); err != nil {
			return "", err
		}
		return ActionCreated, nil
	}
	cfg, err := restConfig(o.KubeconfigPath())
	if err != nil {
		return "", fmt.Errorf("%w; run `dev down --name %s` to delete the broken cluster", err, o.Name)
	}
	port, err := serverPort(cfg.Host)
	if err != nil {
		return "", err
	}
	if o.Port > 0 && o.Port != port {
		return "", fmt.Errorf("cluster %q already exists on port %d, not %d: pass --port %d, or delete it first with `dev down --name %s`", o.Name, port, o.Port, port, o.Name)
	}
	answered, ready := probe(ctx, cfg)
	if ready {
		return ActionReused, nil
	}
	if !answered {
		if err := CheckPortFree(port); err != nil {
			return "", err
		}
	}
	// kwokctl starts only the components that are not running.
	if err := k.run(ctx, StartClusterArgs(o)...); err != nil {
		return "", err
	}
	return ActionStarted, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "kuota-dev"
	return cfg, nil
}

func serverPort(host string) (int, error) {
	u, err := url.Parse(host)
	if err != nil {
		return 0, fmt.Errorf("API server address %q: %w", host, err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0, fmt.Errorf("API server address %q has no port: %w", host, err)
	}
	return port, nil
}

// kwokctl runs the kwokctl binary.
type kwokctl struct {
	path string
	env  []string
	log  io.Writer
}

func (k kwokctl) run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, k.path, args...)
	cmd.Env = k.env
	cmd.WaitDelay = kwokctlWaitDelay
	var out bytes.Buffer
	var w io.Writer = &out
	if k.log != nil {
		w = io.MultiWriter(k.log, &out)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kwokctl %s: %w\n%s", strings.Join(args, " "), err, tail(out.String(), outputTailLines))
	}
	return nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
