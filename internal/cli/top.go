package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/demo"
	"github.com/kuota-dev/kuota/internal/top"
)

// topFlags are the flags of `top`.
type topFlags struct {
	kubeconfig, namespace string
	interval              time.Duration
	once                  bool
}

// newTopCommand builds `top`; connect is nil outside tests.
func newTopCommand(prog string, env Env, connect connectFunc) *cobra.Command {
	if connect == nil {
		connect = func(kubeconfig string) (client.Reader, error) { return newKueueReader(env, kubeconfig) }
	}
	f := topFlags{}
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show a live table of ClusterQueues and LocalQueues",
		Long: `Show every ClusterQueue and LocalQueue with its pending, reserving and admitted
workloads and, per flavor and resource, the quota in use against the nominal
quota and the borrowed part, refreshed every second until interrupted. It reads
the queues' status, so it works on any cluster running Kuota or Kueue.`,
		Example: fmt.Sprintf(`  %[1]s top
  %[1]s top -n ml --once`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.interval <= 0 {
				return fmt.Errorf("--interval must be positive, got %s", f.interval)
			}
			c, err := connect(f.kubeconfig)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			getenv := env.Getenv
			if getenv == nil {
				getenv = os.Getenv
			}
			return top.Run(cmd.Context(), c, out, top.Options{Namespace: f.namespace, Interval: f.interval, Once: f.once,
				Terminal: demo.IsTerminal(out, getenv)})
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig file; default $KUBECONFIG, then ~/.kube/config")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "only the LocalQueues of this namespace (default: every namespace)")
	fs.DurationVar(&f.interval, "interval", time.Second, "time between refreshes")
	fs.BoolVar(&f.once, "once", false, "print the table once and exit")
	return cmd
}
