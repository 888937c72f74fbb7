package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/audit"
)

// connectFunc opens a reader for the cluster a kubeconfig path names ("" for
// the usual loading rules). Tests replace it with a fake client.
type connectFunc func(kubeconfig string) (client.Reader, error)

// auditFlags are the flags of `audit`, as typed by the user.
type auditFlags struct {
	kubeconfig     string
	finalizerGrace time.Duration
}

// newAuditCommand builds `audit`; connect is nil outside tests.
func newAuditCommand(prog string, env Env, connect connectFunc) *cobra.Command {
	if connect == nil {
		connect = func(kubeconfig string) (client.Reader, error) { return newKueueReader(env, kubeconfig) }
	}
	f := auditFlags{}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check Kuota's invariants against the objects in a cluster",
		Long: `Read every Workload, ClusterQueue, Cohort and ResourceFlavor and check the
invariants Kuota promises: no workload admitted twice, ClusterQueue usage in
status equal to the sum over its unfinished workloads holding quota, usage
within nominal quota and borrowing limits throughout the cohort tree, and no
resource-in-use finalizer left on finished Workloads or on Workloads deleted
with no owner. Prints every violation and exits non-zero when there is any.`,
		Example: fmt.Sprintf(`  %[1]s audit
  %[1]s audit --kubeconfig ~/.kube/other --finalizer-grace 5m`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.finalizerGrace <= 0 {
				return fmt.Errorf("--finalizer-grace must be positive, got %s", f.finalizerGrace)
			}
			c, err := connect(f.kubeconfig)
			if err != nil {
				return err
			}
			report, err := audit.RunWithOptions(cmd.Context(), c, audit.Options{FinalizerGrace: f.finalizerGrace})
			if err != nil {
				return fmt.Errorf("audit: %w", err)
			}
			fmt.Fprint(cmd.OutOrStdout(), report)
			if !report.OK() {
				return errors.New(report.Summary())
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.kubeconfig, "kubeconfig", "",
		"path to the kubeconfig file; default $KUBECONFIG, then ~/.kube/config")
	fs.DurationVar(&f.finalizerGrace, "finalizer-grace", audit.DefaultFinalizerGrace,
		"how long a finished Workload, or one deleted with no owner, may keep the resource-in-use finalizer")
	return cmd
}

// kubeconfigRules are the usual loading rules, with $KUBECONFIG read through
// env: an explicit path wins, then $KUBECONFIG, then ~/.kube/config.
func kubeconfigRules(env Env, explicit string) *clientcmd.ClientConfigLoadingRules {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.Precedence = []string{clientcmd.RecommendedHomeFile}
	if env.Getenv != nil {
		if v := env.Getenv(clientcmd.RecommendedConfigPathEnvVar); v != "" {
			rules.Precedence = filepath.SplitList(v)
		}
	}
	rules.ExplicitPath = explicit
	return rules
}

// newKueueReader builds a client for the cluster the kubeconfig names, with
// the Kueue types in its scheme.
func newKueueReader(env Env, kubeconfig string) (client.Reader, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		kubeconfigRules(env, kubeconfig), &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
