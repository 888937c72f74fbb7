package v1beta2

import (
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// Default values applied by SetDefaults.
const (
	DefaultNamespace                         = "kueue-system"
	DefaultWebhookPort                       = 9443
	DefaultWebhookCertDir                    = "/tmp/k8s-webhook-server/serving-certs"
	DefaultLeaderElectionID                  = "c1f6bfd2.kueue.x-k8s.io"
	DefaultLeaderElectionResourceLock        = "leases"
	DefaultLeaderElectionLeaseDuration       = 15 * time.Second
	DefaultLeaderElectionRenewDeadline       = 10 * time.Second
	DefaultLeaderElectionRetryPeriod         = 2 * time.Second
	DefaultMetricsBindAddress                = ":8443"
	DefaultHealthProbeBindAddress            = ":8081"
	DefaultReadinessEndpointName             = "readyz"
	DefaultLivenessEndpointName              = "healthz"
	DefaultCacheSyncTimeout                  = 2 * time.Minute
	DefaultWebhookServiceName                = "kueue-webhook-service"
	DefaultWebhookSecretName                 = "kueue-webhook-server-cert"
	DefaultPodsReadyTimeout                  = 30 * time.Minute
	DefaultRequeuingBackoffBaseSeconds int32 = 60
	DefaultRequeuingBackoffMaxSeconds  int32 = 3600
	// Kuota's client defaults (Kueue's are 300/500) leave room for
	// thousands of admissions per second: one status write each.
	DefaultClientConnectionQPS            float32 = 5000
	DefaultClientConnectionBurst          int32   = 10000
	DefaultJobFrameworkName                       = "batch/job"
	DefaultMultiKueueGCInterval                   = time.Minute
	DefaultMultiKueueOrigin                       = "multikueue"
	DefaultMultiKueueWorkerLostTimeout            = 15 * time.Minute
	DefaultIncrementalDispatcherStepSize  int32   = 3
	DefaultAFSUsageSamplingInterval               = 5 * time.Minute
	DefaultVisibilityBindPort             int32   = 8082
	DefaultQuotaCheckStrategy                     = QuotaCheckBlockUndeclared
	DefaultResourceTransformationStrategy         = Retain
	DefaultCustomLabelSourceKind                  = SourceKindClusterQueue
)

// ServiceAccountNamespaceFile is the file that holds the pod's namespace when
// the manager runs in a cluster.
const ServiceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ServiceAccountNamespace returns the namespace written in
// ServiceAccountNamespaceFile, or DefaultNamespace when the file is missing
// or empty.
func ServiceAccountNamespace() string {
	data, err := os.ReadFile(ServiceAccountNamespaceFile)
	if err != nil {
		return DefaultNamespace
	}
	if ns := strings.TrimSpace(string(data)); ns != "" {
		return ns
	}
	return DefaultNamespace
}

// SetDefaults fills every unset field of cfg that has a default, using
// DefaultNamespace when cfg.Namespace is unset. It never overwrites a value
// the file set, and applying it twice gives the same result.
func SetDefaults(cfg *Configuration) {
	SetDefaultsWithNamespace(cfg, DefaultNamespace)
}

// SetDefaultsWithNamespace is SetDefaults with namespace used when
// cfg.Namespace is unset or empty (for example ServiceAccountNamespace()).
func SetDefaultsWithNamespace(cfg *Configuration, namespace string) {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	if ptr.Deref(cfg.Namespace, "") == "" {
		cfg.Namespace = ptr.To(namespace)
	}
	defaultControllerManager(&cfg.ControllerManager)
	defaultManagedJobsNamespaceSelector(cfg)
	cfg.InternalCertManagement = defaultInternalCertManagement(cfg.InternalCertManagement)
	cfg.WaitForPodsReady = defaultWaitForPodsReady(cfg.WaitForPodsReady)
	cfg.ClientConnection = defaultClientConnection(cfg.ClientConnection)
	if cfg.Integrations == nil {
		cfg.Integrations = &Integrations{}
	}
	if len(cfg.Integrations.Frameworks) == 0 {
		cfg.Integrations.Frameworks = []string{DefaultJobFrameworkName}
	}
	cfg.MultiKueue = defaultMultiKueue(cfg.MultiKueue)
	if afs := cfg.AdmissionFairSharing; afs != nil && afs.UsageSamplingInterval.Duration == 0 {
		afs.UsageSamplingInterval = metav1.Duration{Duration: DefaultAFSUsageSamplingInterval}
	}
	cfg.Resources = defaultResources(cfg.Resources)
	if cfg.VisibilityServer == nil {
		cfg.VisibilityServer = &VisibilityServerConfiguration{}
	}
	if cfg.VisibilityServer.BindPort == nil {
		cfg.VisibilityServer.BindPort = ptr.To(DefaultVisibilityBindPort)
	}
}

func defaultControllerManager(cm *ControllerManager) {
	if cm.Webhook.Port == nil {
		cm.Webhook.Port = ptr.To(DefaultWebhookPort)
	}
	cm.Webhook.CertDir = orDefault(cm.Webhook.CertDir, DefaultWebhookCertDir)
	cm.LeaderElection = defaultLeaderElection(cm.LeaderElection)
	cm.Metrics.BindAddress = orDefault(cm.Metrics.BindAddress, DefaultMetricsBindAddress)
	if cm.Metrics.LocalQueueMetrics == nil {
		cm.Metrics.LocalQueueMetrics = &LocalQueueMetrics{Enable: true}
	}
	for i := range cm.Metrics.CustomLabels {
		if cm.Metrics.CustomLabels[i].SourceKind == nil {
			cm.Metrics.CustomLabels[i].SourceKind = ptr.To(DefaultCustomLabelSourceKind)
		}
	}
	cm.Health.HealthProbeBindAddress = orDefault(cm.Health.HealthProbeBindAddress, DefaultHealthProbeBindAddress)
	cm.Health.ReadinessEndpointName = orDefault(cm.Health.ReadinessEndpointName, DefaultReadinessEndpointName)
	cm.Health.LivenessEndpointName = orDefault(cm.Health.LivenessEndpointName, DefaultLivenessEndpointName)
	if cm.Controller == nil {
		cm.Controller = &ControllerConfigurationSpec{}
	}
	if cm.Controller.CacheSyncTimeout == nil {
		cm.Controller.CacheSyncTimeout = &metav1.Duration{Duration: DefaultCacheSyncTimeout}
	}
}

func defaultLeaderElection(le *configv1alpha1.LeaderElectionConfiguration) *configv1alpha1.LeaderElectionConfiguration {
	if le == nil {
		le = &configv1alpha1.LeaderElectionConfiguration{}
	}
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	le.ResourceName = orDefault(le.ResourceName, DefaultLeaderElectionID)
	le.ResourceLock = orDefault(le.ResourceLock, DefaultLeaderElectionResourceLock)
	defaultDuration(&le.LeaseDuration, DefaultLeaderElectionLeaseDuration)
	defaultDuration(&le.RenewDeadline, DefaultLeaderElectionRenewDeadline)
	defaultDuration(&le.RetryPeriod, DefaultLeaderElectionRetryPeriod)
	return le
}

func defaultManagedJobsNamespaceSelector(cfg *Configuration) {
	if cfg.ManagedJobsNamespaceSelector != nil {
		return
	}
	cfg.ManagedJobsNamespaceSelector = &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key:      corev1.LabelMetadataName,
			Operator: metav1.LabelSelectorOpNotIn,
			Values:   []string{metav1.NamespaceSystem, ptr.Deref(cfg.Namespace, DefaultNamespace)},
		}},
	}
}

func defaultInternalCertManagement(icm *InternalCertManagement) *InternalCertManagement {
	if icm == nil {
		icm = &InternalCertManagement{}
	}
	if icm.Enable == nil {
		icm.Enable = ptr.To(true)
	}
	if *icm.Enable {
		if icm.WebhookServiceName == nil {
			icm.WebhookServiceName = ptr.To(DefaultWebhookServiceName)
		}
		if icm.WebhookSecretName == nil {
			icm.WebhookSecretName = ptr.To(DefaultWebhookSecretName)
		}
	}
	return icm
}

func defaultWaitForPodsReady(w *WaitForPodsReady) *WaitForPodsReady {
	if w == nil {
		w = &WaitForPodsReady{}
	}
	defaultDuration(&w.Timeout, DefaultPodsReadyTimeout)
	if w.BlockAdmission == nil {
		w.BlockAdmission = ptr.To(false)
	}
	if w.RecoveryTimeout == nil {
		w.RecoveryTimeout = &metav1.Duration{Duration: w.Timeout.Duration}
	}
	if w.RequeuingStrategy == nil {
		w.RequeuingStrategy = &RequeuingStrategy{}
	}
	rs := w.RequeuingStrategy
	if rs.Timestamp == nil {
		rs.Timestamp = ptr.To(EvictionTimestamp)
	}
	if rs.BackoffBaseSeconds == nil {
		rs.BackoffBaseSeconds = ptr.To(DefaultRequeuingBackoffBaseSeconds)
	}
	if rs.BackoffMaxSeconds == nil {
		rs.BackoffMaxSeconds = ptr.To(DefaultRequeuingBackoffMaxSeconds)
	}
	return w
}

func defaultClientConnection(cc *ClientConnection) *ClientConnection {
	if cc == nil {
		cc = &ClientConnection{}
	}
	if cc.QPS == nil {
		cc.QPS = ptr.To(DefaultClientConnectionQPS)
	}
	if cc.Burst == nil {
		cc.Burst = ptr.To(DefaultClientConnectionBurst)
	}
	return cc
}

func defaultMultiKueue(mk *MultiKueue) *MultiKueue {
	if mk == nil {
		mk = &MultiKueue{}
	}
	if mk.GCInterval == nil {
		mk.GCInterval = &metav1.Duration{Duration: DefaultMultiKueueGCInterval}
	}
	if ptr.Deref(mk.Origin, "") == "" {
		mk.Origin = ptr.To(DefaultMultiKueueOrigin)
	}
	if mk.WorkerLostTimeout == nil {
		mk.WorkerLostTimeout = &metav1.Duration{Duration: DefaultMultiKueueWorkerLostTimeout}
	}
	if ptr.Deref(mk.DispatcherName, "") == "" {
		mk.DispatcherName = ptr.To(MultiKueueDispatcherModeAllAtOnce)
	}
	if *mk.DispatcherName == MultiKueueDispatcherModeIncremental {
		if mk.IncrementalDispatcherConfig == nil {
			mk.IncrementalDispatcherConfig = &IncrementalDispatcherConfig{}
		}
		if mk.IncrementalDispatcherConfig.StepSize == nil {
			mk.IncrementalDispatcherConfig.StepSize = ptr.To(DefaultIncrementalDispatcherStepSize)
		}
	}
	return mk
}

func defaultResources(r *Resources) *Resources {
	if r == nil {
		r = &Resources{}
	}
	if r.QuotaCheckStrategy == nil {
		r.QuotaCheckStrategy = ptr.To(DefaultQuotaCheckStrategy)
	}
	for i := range r.Transformations {
		if ptr.Deref(r.Transformations[i].Strategy, "") == "" {
			r.Transformations[i].Strategy = ptr.To(DefaultResourceTransformationStrategy)
		}
	}
	return r
}

// EffectiveQuotaCheckStrategy returns the strategy in force for r, which may
// be nil: the configured value, or BlockUndeclared when unset.
func (r *Resources) EffectiveQuotaCheckStrategy() QuotaCheckStrategy {
	if r == nil || r.QuotaCheckStrategy == nil {
		return DefaultQuotaCheckStrategy
	}
	return *r.QuotaCheckStrategy
}

func orDefault(value, def string) string {
	if value == "" {
		return def
	}
	return value
}

func defaultDuration(d *metav1.Duration, def time.Duration) {
	if d.Duration == 0 {
		d.Duration = def
	}
}
