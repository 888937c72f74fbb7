package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/why"
)

// whyFlags are the flags of `why`.
type whyFlags struct {
	kubeconfig, namespace, output string
	patience                      time.Duration
	noEstimate                    bool
}

// newWhyCommand builds `why`; connect is nil outside tests.
func newWhyCommand(prog string, env Env, connect connectFunc) *cobra.Command {
	if connect == nil {
		connect = func(kubeconfig string) (client.Reader, error) { return newKueueReader(env, kubeconfig) }
	}
	f := whyFlags{}
	cmd := &cobra.Command{
		Use:   "why WORKLOAD",
		Short: "Explain why a Workload waits, and estimate when it starts",
		Long: `Explain, from the cluster's live state, why a Workload is not admitted:
the ClusterQueue and flavors it was tried on; for each resource, what it needs,
the nominal quota, what is used and available, and which workloads hold the
most; whether preemption would help and which workloads it would take; whether
a stopped queue, an admission check, a missing LocalQueue, a namespace the
ClusterQueue does not select or a StrictFIFO head blocks it; and how many
workloads are ahead of it. It ends with an estimate of when it starts: Kuota's
scheduling core simulated forward from now, running workloads ending after
their maximumExecutionTimeSeconds or the runtimes of finished workloads of the
same LocalQueue and shape (the assumption is printed with the estimate).
A Workload is named as kubectl names it (kubectl get workloads).`,
		Example: fmt.Sprintf(`  %[1]s why job-train-7c2f1 -n ml
  %[1]s why job-train-7c2f1 -n ml -o json`, prog),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.output != "text" && f.output != "json" {
				return fmt.Errorf("--output must be text or json, got %q", f.output)
			}
			if f.patience < 0 {
				return fmt.Errorf("--patience must not be negative, got %s", f.patience)
			}
			ns := f.namespace
			if ns == "" {
				ns = contextNamespace(env, f.kubeconfig)
			}
			c, err := connect(f.kubeconfig)
			if err != nil {
				return err
			}
			st, err := why.Read(cmd.Context(), c)
			if err != nil {
				return err
			}
			ex, err := why.Explain(st, ns, args[0], why.Options{Scheduling: scheduling.Options{Patience: f.patience}, NoEstimate: f.noEstimate})
			if err != nil {
				return err
			}
			if f.output == "json" {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(ex)
			}
			return why.Render(cmd.OutOrStdout(), ex)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "path to the kubeconfig file; default $KUBECONFIG, then ~/.kube/config")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the Workload's namespace (default: the kubeconfig context's)")
	fs.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	fs.DurationVar(&f.patience, "patience", scheduling.DefaultPatience,
		"the manager's preemption patience (kuota-manager --preemption-patience; 0 for Kueue)")
	fs.BoolVar(&f.noEstimate, "no-estimate", false, "skip the simulation that estimates the start")
	return cmd
}

// contextNamespace is the current kubeconfig context's namespace, or
// "default".
func contextNamespace(env Env, kubeconfig string) string {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(kubeconfigRules(env, kubeconfig), &clientcmd.ConfigOverrides{})
	if ns, _, err := loader.Namespace(); err == nil && ns != "" {
		return ns
	}
	return "default"
}
