// Package app assembles the Kuota manager: the controller-runtime manager
// (client, leader election, probes, metrics), the cache, the per-kind
// controllers, the status reporter and the scheduler, the pending-workloads
// API server (visibility.go), and, when webhooks are registered, the
// webhook server with its certificates (webhooks.go), configured from the
// Configuration file.
package app

import (
	"fmt"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/controller/status"
	"github.com/kuota-dev/kuota/internal/integrations/all"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/scheduler"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/settings"
	"github.com/kuota-dev/kuota/internal/visibility"
)

// Options are what the command line adds to the Configuration.
type Options struct {
	// RestConfig reaches the API server.
	RestConfig *rest.Config
	// Config is the loaded and defaulted Configuration.
	Config *configapi.Configuration
	// LeaderElectionNamespace overrides where the Lease lives (default:
	// the Configuration's namespace).
	LeaderElectionNamespace string
	// MetricsBindAddress and HealthBindAddress override the Configuration
	// (tests use "0" to disable them).
	MetricsBindAddress, HealthBindAddress *string
	// SecureMetrics serves metrics over HTTPS with authn/authz (default
	// true, as Kueue does; tests may turn it off).
	SecureMetrics *bool
	// SkipControllerNameValidation lets one process build several
	// managers in turn (tests); controller-runtime otherwise refuses a
	// second controller of the same name.
	SkipControllerNameValidation bool

	// Webhooks register admission webhooks on the manager's webhook server
	// (mgr.GetWebhookServer()); New calls them after the controllers are
	// set up. The webhook server and its certificates (internal
	// management, cert-manager files or local mode) exist only when this
	// list is non-empty or LocalWebhooks is set.
	Webhooks []func(ctrl.Manager) error
	// LocalWebhooks runs the manager as a process next to a local cluster:
	// it serves webhooks on 127.0.0.1:<webhook.port> with a loopback
	// certificate kept in webhook.certDir, and registers the webhook
	// configurations with a url client config (kuota-manager
	// --local-webhooks; see internal/localwebhook).
	LocalWebhooks bool
	// PreemptionPatience is scheduling.Options.Patience; nil means
	// scheduling.DefaultPatience, 0 preempts at once as Kueue does.
	PreemptionPatience *time.Duration
	// EventRate bounds the Normal events recorded a second (events.go);
	// nil means DefaultEventRate, 0 no limit.
	EventRate *float64
	// WebhookManifests overrides the webhook configurations local mode
	// registers (default: the generated config/webhook/manifests.yaml).
	WebhookManifests []byte
	// Visibility serves the pending-workloads API (visibility.go) on
	// visibilityServer.bindAddress:bindPort; nil means true (unless the
	// VisibilityOnDemand feature gate is off). Tests turn it off.
	Visibility *bool
	// VisibilityPort overrides visibilityServer.bindPort (0 picks a free
	// port; tests).
	VisibilityPort *int
	// LocalVisibility registers the API with kube-apiserver as local mode
	// (LocalWebhooks) does: a Service and EndpointSlice pointing at this
	// host and the APIServices (tests).
	LocalVisibility bool
	// Standalone runs without leader election and without webhooks: the
	// manager's namespace does not exist (standalone.go).
	Standalone bool
	// LeaseNamespaceExists keeps leader election in a Standalone
	// manager whose Configuration puts the Lease in a namespace other than
	// its own that exists (leaderElection.resourceNamespace): replicas
	// must not all write because the webhooks' namespace is missing.
	LeaseNamespaceExists bool
}

// Manager is an assembled, not yet started, Kuota manager.
type Manager struct {
	ctrl.Manager
	Cache     *cache.Cache
	Scheduler *scheduler.Scheduler
	Reporter  *status.Reporter
	// Visibility is the pending-workloads API server; nil when off.
	Visibility *visibility.Server
}

// NewScheme returns the scheme of every kind the manager handles.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering built-in kinds: %w", err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering kueue.x-k8s.io kinds: %w", err)
	}
	if err := jobframework.AddToScheme(scheme, all.Integrations()); err != nil {
		return nil, err
	}
	if err := autoscaling.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering autoscaling.x-k8s.io kinds: %w", err)
	}
	// CRDs: the CA bundle and local address of the conversion webhook.
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("registering apiextensions.k8s.io kinds: %w", err)
	}
	return scheme, nil
}

// New builds the manager and everything it runs.
func New(opts Options) (*Manager, error) {
	cfg := opts.Config
	logIgnoredSettings(cfg)
	restCfg := rest.CopyConfig(opts.RestConfig)
	if cc := cfg.ClientConnection; cc != nil {
		restCfg.QPS, restCfg.Burst = ptr.Deref(cc.QPS, configapi.DefaultClientConnectionQPS), int(ptr.Deref(cc.Burst, configapi.DefaultClientConnectionBurst))
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	mo := managerOptions(opts, scheme)
	if mo.Metrics, err = metricsOptions(opts); err != nil {
		return nil, err
	}
	var hooks *webhookParts
	if webhooksEnabled(opts) {
		if hooks, err = newWebhookParts(opts); err != nil {
			return nil, err
		}
		mo.WebhookServer = hooks.server
	}
	var access *accessChecker
	mo.NewCache = newAccessCache(&access)
	mgr, err := ctrl.NewManager(restCfg, mo)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := mgr.AddReadyzCheck("permissions", access.Check); err != nil {
		return nil, fmt.Errorf("adding the permissions check: %w", err)
	}
	m := &Manager{Manager: mgr, Cache: cache.New(settings.Workloads(cfg))}
	m.Cache.SetAdmissionFairSharing(settings.AdmissionFairSharing(cfg))
	if err := mgr.Add(eventsRunnable{b: mo.EventBroadcaster}); err != nil { //nolint:staticcheck // see managerOptions
		return nil, fmt.Errorf("adding the event broadcaster: %w", err)
	}
	if err := m.setupControllers(cfg, ptr.Deref(opts.PreemptionPatience, scheduling.DefaultPatience)); err != nil {
		return nil, err
	}
	if visibilityEnabled(opts) {
		if err := m.setupVisibility(opts); err != nil {
			return nil, err
		}
	}
	if hooks != nil {
		if err := hooks.attach(mgr, opts); err != nil {
			return nil, err
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding readiness check: %w", err)
	}
	return m, nil
}

func managerOptions(opts Options, scheme *runtime.Scheme) ctrl.Options {
	cfg := opts.Config
	o := ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOptions(),
		HealthProbeBindAddress:  cfg.Health.HealthProbeBindAddress,
		ReadinessEndpointName:   "/" + cfg.Health.ReadinessEndpointName,
		LivenessEndpointName:    "/" + cfg.Health.LivenessEndpointName,
		PprofBindAddress:        pprofAddress(cfg.PprofBindAddress),
		GracefulShutdownTimeout: ptr.To(30 * time.Second),
		EventBroadcaster:        newEventBroadcaster(ptr.Deref(opts.EventRate, DefaultEventRate)), //nolint:staticcheck // the only way to size the event correlator's caches
	}
	if opts.HealthBindAddress != nil {
		o.HealthProbeBindAddress = *opts.HealthBindAddress
	}
	if le := cfg.LeaderElection; le != nil && ptr.Deref(le.LeaderElect, false) && (!opts.Standalone || opts.LeaseNamespaceExists) {
		o.LeaderElection = true
		o.LeaderElectionID = le.ResourceName
		o.LeaderElectionResourceLock = le.ResourceLock
		o.LeaderElectionNamespace = ptr.Deref(cfg.Namespace, "kueue-system")
		if le.ResourceNamespace != "" {
			o.LeaderElectionNamespace = le.ResourceNamespace
		}
		if opts.LeaderElectionNamespace != "" {
			o.LeaderElectionNamespace = opts.LeaderElectionNamespace
		}
		o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = &le.LeaseDuration.Duration, &le.RenewDeadline.Duration, &le.RetryPeriod.Duration
		// Losing the lease ends the process: a former leader must not keep
		// writing.
		o.LeaderElectionReleaseOnCancel = true
	}
	if opts.SkipControllerNameValidation {
		o.Controller.SkipNameValidation = ptr.To(true)
	}
	if c := cfg.Controller; c != nil && c.CacheSyncTimeout != nil {
		o.Controller.CacheSyncTimeout = c.CacheSyncTimeout.Duration
	}
	return o
}

// newWriter returns the status writer over the manager's client.
func newWriter(mgr manager.Manager) *apply.Writer { return &apply.Writer{Client: mgr.GetClient()} }
