package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
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
	pods           bool
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
		Long: fmt.Sprintf(`Read every Workload, ClusterQueue, Cohort and ResourceFlavor and check the
invariants Kuota promises: no workload admitted twice, ClusterQueue usage in
status equal to the sum over its unfinished workloads holding quota, usage
within nominal quota and borrowing limits throughout the cohort tree, and no
resource-in-use finalizer left on finished Workloads or on Workloads deleted
with no owner.

It also reads every pod and checks pods against admissions: no pod of a
managed job (one that names its Workload, or that Kuota gated) runs, or is
ungated, while its Workload is not admitted or does not exist. A pod whose
Workload is being evicted, or lost its admission less than %[1]s ago, is
not reported. And no Workload holds quota once its job is gone and none of
its pods runs. These checks list every pod and the metadata of the jobs of
the Workloads holding quota; --pods=false skips them on huge clusters.

Prints every violation and exits non-zero when there is any.`, audit.DefaultPodGrace),
		Example: fmt.Sprintf(`  %[1]s audit
  %[1]s audit --kubeconfig ~/.kube/other --finalizer-grace 5m
  %[1]s audit --pods=false`, prog),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.finalizerGrace <= 0 {
				return fmt.Errorf("--finalizer-grace must be positive, got %s", f.finalizerGrace)
			}
			c, err := connect(f.kubeconfig)
			if err != nil {
				return err
			}
			report, err := audit.RunWithOptions(cmd.Context(), c, audit.Options{
				FinalizerGrace: f.finalizerGrace, SkipPods: !f.pods,
			})
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
	fs.BoolVar(&f.pods, "pods", true,
		"check pods against admissions and Workloads against their jobs (lists every pod; --pods=false skips it)")
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
// the built-in kinds (pods) and the Kueue types in its scheme.
func newKueueReader(env Env, kubeconfig string) (client.Reader, error) {
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		kubeconfigRules(env, kubeconfig), &clientcmd.ConfigOverrides{})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building scheme: %w", err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client for %s: %w", cfg.Host, err)
	}
	return c, nil
}
