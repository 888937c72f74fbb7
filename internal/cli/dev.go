package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kuota-dev/kuota/internal/devcluster"
)

const defaultUpTimeout = 5 * time.Minute

// clusterFlags are the flags that name a cluster, shared by up and down.
type clusterFlags struct {
	name     string
	workDir  string
	toolsBin string
	verbose  bool
}

// upFlags are the flags of `dev up`, as typed by the user.
type upFlags struct {
	clusterFlags
	port             int
	nodes            int
	nodeCPU          string
	nodeMemory       string
	nodeGPUs         int64
	podsPerNode      int64
	nodeLabels       []string
	nodeGroups       []string
	disableQPSLimits bool
	podRuntime       time.Duration
	timeout          time.Duration
}

func newDevCommand(prog string, env Env) *cobra.Command {
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Run a local Kubernetes cluster with fake nodes (no Docker needed)",
		Long: `Run a local Kubernetes cluster for demos and tests. kwokctl runs etcd,
kube-apiserver, kube-controller-manager, kube-scheduler and kwok as local
processes from the binaries that "make tools" builds; nodes are fake. Pods keep
running until deleted, as serving pods do, unless they ask to finish: a pod
annotated ` + devcluster.RunForAnnotation + `: <duration> succeeds that long after it
starts, and "dev up --pod-runtime <duration>" makes every pod whose
restartPolicy is not Always (a Job's) succeed that long after it starts.`,
	}
	defaults := devcluster.DefaultOptions(env.WorkingDir, env.UserCacheDir, env.Getenv)
	dev.AddCommand(newUpCommand(prog, env, defaults), newDownCommand(env, defaults))
	return dev
}

func addClusterFlags(fs *pflag.FlagSet, f *clusterFlags, d devcluster.Options) {
	fs.StringVar(&f.name, "name", d.Name, "name of the cluster")
	fs.StringVar(&f.workDir, "workdir", d.WorkDir, "kwokctl work dir (KWOK_WORKDIR) that holds the clusters")
	fs.StringVar(&f.toolsBin, "tools-bin", d.ToolsBin,
		"folder with etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok and kwokctl (env "+devcluster.ToolsBinEnv+")")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "show kwokctl's output")
}

func newUpCommand(prog string, env Env, d devcluster.Options) *cobra.Command {
	f := upFlags{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create or start the local cluster and reconcile its fake nodes",
		Long: `Create the local cluster, or start it if it is stopped, then create or update
its fake nodes. Running it again is safe: a running cluster is reused and only
its nodes are brought in line with the flags.`,
		Example: fmt.Sprintf(`  %[1]s dev up
  %[1]s dev up --nodes 8 --node-cpu 64 --node-labels topology.kubernetes.io/zone=a
  %[1]s dev up --nodes 2 --node-group gpu:2:accelerator=a100:nvidia.com/gpu=8
  %[1]s dev up --nodes 0 --node-group cpu:4::cpu=16 --node-group big:1:tier=big:cpu=128,memory=1Ti`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(d)
			if err != nil {
				return err
			}
			if f.verbose {
				o.Log = env.Err
			}
			return runUp(cmd.Context(), o, f.timeout, cmd.OutOrStdout(), env.Err)
		},
	}
	fs := cmd.Flags()
	addClusterFlags(fs, &f.clusterFlags, d)
	fs.IntVar(&f.port, "port", d.Port, "port of the kube-apiserver on this host; 0 picks a free one")
	fs.IntVar(&f.nodes, "nodes", d.Nodes, "number of nodes in the default group ("+devcluster.DefaultNodeGroup+"-0, ...)")
	fs.StringVar(&f.nodeCPU, "node-cpu", d.NodeCPU.String(), "cpu capacity of each node")
	fs.StringVar(&f.nodeMemory, "node-memory", d.NodeMemory.String(), "memory capacity of each node")
	fs.Int64Var(&f.nodeGPUs, "node-gpus", d.NodeGPUs, "nvidia.com/gpu capacity of each node; 0 does not advertise the resource")
	fs.Int64Var(&f.podsPerNode, "pods-per-node", d.PodsPerNode, "pods capacity of each node")
	fs.StringSliceVar(&f.nodeLabels, "node-labels", nil, "labels for every node, key=value[,key=value...]")
	fs.StringArrayVar(&f.nodeGroups, "node-group", nil,
		"extra node group NAME:COUNT[:LABELS[:RESOURCES]], e.g. gpu:2:accelerator=a100:cpu=64,nvidia.com/gpu=8 (repeatable)")
	fs.BoolVar(&f.disableQPSLimits, "disable-qps-limits", d.DisableQPSLimits, "lift the request limits of the control plane")
	fs.DurationVar(&f.podRuntime, "pod-runtime", d.PodRuntime,
		"how long a pod whose restartPolicy is not Always (a Job's) runs before it succeeds; 0 keeps pods running until deleted "+
			"(a pod's "+devcluster.RunForAnnotation+" annotation wins; taken when the cluster is created)")
	fs.DurationVar(&f.timeout, "timeout", defaultUpTimeout, "give up after this long")
	return cmd
}

// options turns the flags into devcluster options, with clear errors.
func (f upFlags) options(d devcluster.Options) (devcluster.Options, error) {
	o := f.clusterFlags.apply(d)
	o.Port, o.Nodes, o.NodeGPUs, o.PodsPerNode = f.port, f.nodes, f.nodeGPUs, f.podsPerNode
	o.DisableQPSLimits = f.disableQPSLimits
	o.PodRuntime = f.podRuntime
	var err error
	if o.NodeCPU, err = parseQuantity("--node-cpu", f.nodeCPU); err != nil {
		return o, err
	}
	if o.NodeMemory, err = parseQuantity("--node-memory", f.nodeMemory); err != nil {
		return o, err
	}
	if o.NodeLabels, err = devcluster.ParseLabels(f.nodeLabels); err != nil {
		return o, fmt.Errorf("--node-labels: %w", err)
	}
	for _, spec := range f.nodeGroups {
		g, err := devcluster.ParseNodeGroup(spec)
		if err != nil {
			return o, fmt.Errorf("--node-group: %w", err)
		}
		o.NodeGroups = append(o.NodeGroups, g)
	}
	if f.timeout <= 0 {
		return o, fmt.Errorf("--timeout must be positive, got %s", f.timeout)
	}
	return o, o.Validate()
}

func (f clusterFlags) apply(d devcluster.Options) devcluster.Options {
	d.Name, d.WorkDir, d.ToolsBin = f.name, f.workDir, f.toolsBin
	return d
}

func parseQuantity(flag, value string) (resource.Quantity, error) {
	q, err := resource.ParseQuantity(value)
	if err != nil {
		return q, fmt.Errorf("%s %q: not a quantity (e.g. 32, 500m, 256Gi): %w", flag, value, err)
	}
	return q, nil
}

func runUp(ctx context.Context, o devcluster.Options, timeout time.Duration, out, errOut io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fmt.Fprintf(errOut, "Bringing up cluster %q in %s ...\n", o.Name, o.WorkDir)
	res, err := devcluster.Up(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Cluster %q %s in %s: %d nodes, API server %s\n",
		res.Name, res.Action, res.Elapsed.Round(10*time.Millisecond), len(res.Nodes), res.Server)
	fmt.Fprintf(out, "Kubeconfig: %s\n\n  export KUBECONFIG=%s\n", res.Kubeconfig, res.Kubeconfig)
	return nil
}

func newDownCommand(env Env, d devcluster.Options) *cobra.Command {
	f := clusterFlags{}
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop and delete the local cluster and its files",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := f.apply(d)
			if f.verbose {
				o.Log = env.Err
			}
			exists, err := devcluster.ClusterExists(o)
			if err != nil {
				return err
			}
			if !exists {
				fmt.Fprintf(cmd.OutOrStdout(), "Cluster %q does not exist in %s.\n", o.Name, o.WorkDir)
				return nil
			}
			if err := devcluster.Down(cmd.Context(), o); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Cluster %q deleted.\n", o.Name)
			return nil
		},
	}
	addClusterFlags(cmd.Flags(), &f, d)
	return cmd
}
