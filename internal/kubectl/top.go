package kubectl

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kuota-dev/kuota/internal/demo"
	"github.com/kuota-dev/kuota/internal/top"
)

// newTopCommand builds `top`, Kuota's own: see internal/top.
func newTopCommand(k *kit) *cobra.Command {
	var interval time.Duration
	var once, all bool
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Show a live table of ClusterQueues and LocalQueues",
		Long: `Show the LocalQueues of the namespace and the ClusterQueues they feed (every
queue with -A), with their pending, reserving and admitted workloads and,
per flavor and resource, the quota in use against the nominal quota and the
borrowed part, refreshed every second until interrupted. It reads the queues'
status, so it works on any cluster running Kuota or Kueue.`,
		Example: `  kubectl kuota top -A
  kubectl kuota top -n ml --once`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval <= 0 {
				return fmt.Errorf("--interval must be positive, got %s", interval)
			}
			s, err := k.connect()
			if err != nil {
				return err
			}
			ns := s.namespace
			if all {
				ns = ""
			}
			return top.Run(cmd.Context(), s.client, k.opts.Out, top.Options{Namespace: ns, Interval: interval, Once: once,
				Terminal: demo.IsTerminal(k.opts.Out, os.Getenv)})
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&all, "all-namespaces", "A", false, "the LocalQueues of every namespace")
	fs.DurationVar(&interval, "interval", time.Second, "time between refreshes")
	fs.BoolVar(&once, "once", false, "print the table once and exit")
	return cmd
}
