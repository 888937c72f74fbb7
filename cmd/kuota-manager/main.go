// Command kuota-manager runs Kuota's controllers and scheduler against a
// Kubernetes cluster. It reads the Configuration file (config.kueue.x-k8s.io
// /v1beta2, kind Configuration) given with --config; the kubeconfig comes
// from --kubeconfig, $KUBECONFIG or the in-cluster service account.
// --local-webhooks runs it on a developer's host next to a local cluster
// (docs/design/install.md).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/webhook"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kuota-manager: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	app.DropImportedTestFlags()
	configFile := flag.String("config", "", "path to the Configuration file (config.kueue.x-k8s.io/v1beta2); defaults apply when empty")
	localWebhooks := flag.Bool("local-webhooks", false, "run next to a local cluster: serve webhooks on 127.0.0.1:<webhook.port> "+
		"with a self-issued certificate kept in webhook.certDir, and register the webhook configurations with that URL")
	patience := flag.Duration("preemption-patience", scheduling.DefaultPatience,
		"wait instead of preempting when every workload a preemption would evict is expected to end within this "+
			"(from its maximumExecutionTimeSeconds or the runtimes of earlier workloads of its shape in its LocalQueue or cohort tree, "+
			"or of any shape in its cohort tree), counted on top of how long evictions take at the moment; 0 preempts at once, as Kueue does")
	eventRate := flag.Float64("event-rate", app.DefaultEventRate,
		"Normal events recorded a second on average (bursts of 100); past it they are dropped and counted in kuota_events_dropped_total. "+
			"Warning events always pass; 0 (the default) records every event")
	apiWait := flag.Duration("api-wait", app.DefaultAPIWait,
		"how long to wait at start for the API server to serve the kueue.x-k8s.io CRDs (a manager started together with the install bundle); 0 checks once")
	metricsPort := flag.Int("metricsPort", 0,
		"serve metrics over plain HTTP on this port (all interfaces) instead of the Configuration's metrics.bindAddress over HTTPS; "+
			"the flag of Kueue's minimalkueue, which Kueue's scalability runner passes to the manager it starts")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file while the manager runs")
	memProfile := flag.String("memprofile", "", "write a heap profile to this file when the manager stops")
	enableTAS := flag.Bool("enableTAS", false,
		"accepted for Kueue's scalability runner; topology-aware scheduling is always on (it starts watching nodes and pods once a ResourceFlavor names a Topology)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	// Values are encoded only for lines written (app.LazyValues).
	ctrl.SetLogger(app.LazyValues(zap.New(zap.UseFlagOptions(&zapOpts))))
	// Libraries that log with klog (client-go, the visibility server's
	// k8s.io/apiserver) log through the same logger.
	klog.SetLogger(ctrl.Log)
	gcPercent := app.TuneGC(os.LookupEnv)
	ctrl.Log.WithName("setup").Info("garbage collector", "gcPercent", gcPercent)

	cfg, err := loadConfig(*configFile)
	if err != nil {
		return err
	}
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	if *patience < 0 {
		return fmt.Errorf("--preemption-patience must not be negative, got %s", *patience)
	}
	if *eventRate < 0 {
		return fmt.Errorf("--event-rate must not be negative, got %g", *eventRate)
	}
	if *apiWait < 0 {
		return fmt.Errorf("--api-wait must not be negative, got %s", *apiWait)
	}
	if *metricsPort < 0 || *metricsPort > 65535 {
		return fmt.Errorf("--metricsPort must be a port number (1-65535, 0 for the Configuration's), got %d", *metricsPort)
	}
	if *enableTAS {
		ctrl.Log.Info("--enableTAS: topology-aware scheduling is always on; the flag changes nothing")
	}
	profiles, err := app.StartProfiles(*cpuProfile, *memProfile)
	if err != nil {
		return err
	}
	defer func() {
		if err := profiles.Stop(); err != nil {
			ctrl.Log.Error(err, "writing the profiles")
		}
	}()
	ctx := ctrl.SetupSignalHandler()
	disc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	if err := app.WaitForAPI(ctx, disc, *apiWait); err != nil {
		return err
	}
	opts := app.Options{RestConfig: restCfg, Config: cfg, LocalWebhooks: *localWebhooks, Webhooks: webhookSetups(cfg),
		PreemptionPatience: patience, EventRate: eventRate}
	if *metricsPort > 0 {
		opts.MetricsBindAddress, opts.SecureMetrics = ptr.To(fmt.Sprintf(":%d", *metricsPort)), ptr.To(false)
	}
	if !*localWebhooks {
		// Local mode creates the namespace it needs (docs/design/install.md).
		if opts.Standalone, err = standalone(ctx, restCfg, *cfg.Namespace); err != nil {
			return err
		}
		if le := cfg.LeaderElection; opts.Standalone && le != nil && le.ResourceNamespace != "" && le.ResourceNamespace != *cfg.Namespace {
			opts.LeaseNamespaceExists = leaseNamespaceExists(ctx, restCfg, le.ResourceNamespace)
		}
	}
	m, err := app.New(opts)
	if err != nil {
		return err
	}
	ctrl.Log.Info("starting kuota-manager", "namespace", *cfg.Namespace)
	return m.Start(ctx)
}

// standalone reports whether the manager's namespace is missing (a bare
// API server: envtest, Kueue's scalability runner with --minimalKueue), and
// logs what the manager then runs without.
func standalone(ctx context.Context, restCfg *rest.Config, ns string) (bool, error) {
	c, err := client.New(restCfg, client.Options{})
	if err != nil {
		return false, fmt.Errorf("creating a client: %w", err)
	}
	missing, err := app.NamespaceMissing(ctx, c, ns)
	if err != nil {
		ctrl.Log.Error(err, "cannot tell whether the manager's namespace exists; running as installed")
		return false, nil
	}
	if missing {
		ctrl.Log.Info("the manager's namespace does not exist: running standalone, without leader election and without webhooks "+
			"(their Lease and certificate Secret live there); create the namespace, or install the bundle, for a full manager", "namespace", ns)
	}
	return missing, nil
}

// leaseNamespaceExists reports whether the Lease's own namespace exists:
// then a standalone manager still elects a leader.
func leaseNamespaceExists(ctx context.Context, restCfg *rest.Config, ns string) bool {
	c, err := client.New(restCfg, client.Options{})
	if err != nil {
		return false
	}
	missing, err := app.NamespaceMissing(ctx, c, ns)
	if err == nil && !missing {
		ctrl.Log.Info("leader election stays on: its Lease's namespace exists", "namespace", ns)
	}
	return err == nil && !missing
}

// webhookSetups lists the admission webhooks the manager serves: those of
// Kuota's own kinds and those of the enabled job integrations.
func webhookSetups(cfg *configapi.Configuration) []func(ctrl.Manager) error {
	return []func(ctrl.Manager) error{webhook.Setup, app.JobWebhooks(cfg)}
}

// loadConfig reads the Configuration, or returns the defaults when no file
// is given.
func loadConfig(path string) (*configapi.Configuration, error) {
	if path == "" {
		return configapi.Decode([]byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"))
	}
	return configapi.Load(path)
}
