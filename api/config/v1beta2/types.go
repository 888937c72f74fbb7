package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1alpha1 "k8s.io/component-base/config/v1alpha1"
)

// +kubebuilder:object:root=true

// Configuration is the whole manager configuration file. Every block is
// optional; SetDefaults fills what the file leaves out.
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// Namespace is where the manager runs. It is part of the webhook Service
	// DNS name and of the default managedJobsNamespaceSelector. When unset it
	// comes from the pod's service-account namespace file, or kueue-system.
	Namespace *string `json:"namespace,omitempty"`

	// ControllerManager holds the generic manager settings; its fields sit at
	// the top level of the file.
	ControllerManager `json:",inline"`

	// ManageJobsWithoutQueueName makes the manager suspend and hold jobs that
	// carry no queue-name label, instead of ignoring them.
	ManageJobsWithoutQueueName bool `json:"manageJobsWithoutQueueName"`

	// ManagedJobsNamespaceSelector picks the namespaces whose jobs may be
	// managed. For pod-based integrations it is a hard limit; for the other
	// integrations it only narrows the effect of ManageJobsWithoutQueueName.
	ManagedJobsNamespaceSelector *metav1.LabelSelector `json:"managedJobsNamespaceSelector,omitempty"`

	// InternalCertManagement configures the built-in certificate rotation.
	InternalCertManagement *InternalCertManagement `json:"internalCertManagement,omitempty"`

	// WaitForPodsReady configures all-or-nothing admission: a workload whose
	// pods do not all become ready in time is evicted and requeued.
	WaitForPodsReady *WaitForPodsReady `json:"waitForPodsReady,omitempty"`

	// ClientConnection tunes the client used to talk to the API server.
	ClientConnection *ClientConnection `json:"clientConnection,omitempty"`

	// Integrations lists the job frameworks the manager handles.
	Integrations *Integrations `json:"integrations,omitempty"`

	// MultiKueue configures multi-cluster dispatching.
	MultiKueue *MultiKueue `json:"multiKueue,omitempty"`

	// FairSharing turns on fair sharing between ClusterQueues when present.
	FairSharing *FairSharing `json:"fairSharing,omitempty"`

	// AdmissionFairSharing turns on usage-based ordering of workloads across
	// LocalQueues when present.
	AdmissionFairSharing *AdmissionFairSharing `json:"admissionFairSharing,omitempty"`

	// Resources controls how resource requests are counted against quota.
	Resources *Resources `json:"resources,omitempty"`

	// FeatureGates overrides feature gate defaults by name. It cannot be used
	// together with the --feature-gates command-line flag.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// ObjectRetentionPolicies enables automatic deletion of finished or
	// deactivated objects. Nil keeps everything.
	ObjectRetentionPolicies *ObjectRetentionPolicies `json:"objectRetentionPolicies,omitempty"`

	// VisibilityServer configures the listener of the visibility API server.
	VisibilityServer *VisibilityServerConfiguration `json:"visibilityServer,omitempty"`
}

// ControllerManager groups the settings handed to the controller-runtime
// manager. Its fields are inlined into Configuration.
type ControllerManager struct {
	// Webhook configures the admission webhook server.
	Webhook ControllerWebhook `json:"webhook,omitempty"`

	// LeaderElection configures leader election between replicas.
	LeaderElection *configv1alpha1.LeaderElectionConfiguration `json:"leaderElection,omitempty"`

	// Metrics configures the Prometheus endpoint.
	Metrics ControllerMetrics `json:"metrics,omitempty"`

	// Health configures the liveness and readiness probe endpoint.
	Health ControllerHealth `json:"health,omitempty"`

	// PprofBindAddress is the listen address of the pprof endpoint. Empty or
	// "0" disables it. Profiles may leak data; keep the port private.
	PprofBindAddress string `json:"pprofBindAddress,omitempty"`

	// Controller holds settings shared by every controller of the manager.
	Controller *ControllerConfigurationSpec `json:"controller,omitempty"`

	// TLS restricts the TLS settings of the webhook, metrics and visibility
	// servers. Unset fields keep Go's defaults.
	TLS *TLSOptions `json:"tls,omitempty"`
}

// ControllerWebhook configures the admission webhook server.
type ControllerWebhook struct {
	// Port is the TCP port of the webhook server.
	Port *int `json:"port,omitempty"`

	// Host is the address the webhook server binds to; empty means all.
	Host string `json:"host,omitempty"`

	// CertDir is the directory holding tls.crt and tls.key.
	CertDir string `json:"certDir,omitempty"`
}

// ControllerMetrics configures the metrics endpoint and optional metrics.
type ControllerMetrics struct {
	// BindAddress is the listen address of the metrics server; "0" disables it.
	BindAddress string `json:"bindAddress,omitempty"`

	// EnableClusterQueueResources adds per-flavor quota and usage metrics
	// for ClusterQueues.
	EnableClusterQueueResources bool `json:"enableClusterQueueResources,omitempty"`

	// CustomLabels promotes object labels or annotations to extra metric
	// labels named custom_<name>.
	CustomLabels []ControllerMetricsCustomLabel `json:"customLabels,omitempty"`

	// LocalQueueMetrics enables and filters the per-LocalQueue metrics.
	LocalQueueMetrics *LocalQueueMetrics `json:"localQueueMetrics,omitempty"`
}

// CustomLabelSourceKind names the kind of object a custom metric label is read from.
type CustomLabelSourceKind string

const (
	// SourceKindClusterQueue reads the label from the ClusterQueue (the default).
	SourceKindClusterQueue CustomLabelSourceKind = "ClusterQueue"
	// SourceKindLocalQueue reads the label from the LocalQueue.
	SourceKindLocalQueue CustomLabelSourceKind = "LocalQueue"
	// SourceKindCohort reads the label from the Cohort.
	SourceKindCohort CustomLabelSourceKind = "Cohort"
	// SourceKindWorkload reads the label from the Workload.
	SourceKindWorkload CustomLabelSourceKind = "Workload"
)

// ControllerMetricsCustomLabel describes one extra metric label.
type ControllerMetricsCustomLabel struct {
	// Name is the suffix of the metric label (custom_<name>). It must match
	// ^[a-zA-Z][a-zA-Z0-9_]*$.
	Name string `json:"name"`

	// SourceLabelKey is the object label to read. Defaults to Name when
	// SourceAnnotationKey is also empty.
	SourceLabelKey string `json:"sourceLabelKey,omitempty"`

	// SourceAnnotationKey is the object annotation to read instead of a label.
	SourceAnnotationKey string `json:"sourceAnnotationKey,omitempty"`

	// SourceKind is the kind of object the value comes from; ClusterQueue
	// when unset.
	SourceKind *CustomLabelSourceKind `json:"sourceKind,omitempty"`

	// TrackedValues, when not empty, is the closed list of values reported
	// as-is; any other value is reported as a fixed placeholder. Required
	// (1 to 12 values) for the Workload source kind.
	TrackedValues []string `json:"trackedValues,omitempty"`
}

// LocalQueueMetrics configures the per-LocalQueue metrics.
type LocalQueueMetrics struct {
	// Enable turns the LocalQueue metrics on.
	Enable bool `json:"enable,omitempty"`

	// LocalQueueSelector limits the metrics to matching LocalQueues.
	LocalQueueSelector *metav1.LabelSelector `json:"localQueueSelector,omitempty"`
}

// ControllerHealth configures the health probe endpoint.
type ControllerHealth struct {
	// HealthProbeBindAddress is the listen address of the probes; empty or
	// "0" disables them.
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`

	// ReadinessEndpointName is the path of the readiness probe.
	ReadinessEndpointName string `json:"readinessEndpointName,omitempty"`

	// LivenessEndpointName is the path of the liveness probe.
	LivenessEndpointName string `json:"livenessEndpointName,omitempty"`
}

// ControllerConfigurationSpec holds settings shared by all controllers.
type ControllerConfigurationSpec struct {
	// GroupKindConcurrency maps "Kind.group" (e.g. "Job.batch", or just
	// "Pod" for the core group) to the number of parallel reconciles.
	GroupKindConcurrency map[string]int `json:"groupKindConcurrency,omitempty"`

	// CacheSyncTimeout bounds the wait for informer caches to sync.
	CacheSyncTimeout *metav1.Duration `json:"cacheSyncTimeout,omitempty"`
}

// TLSOptions restricts the TLS settings of the manager's servers.
type TLSOptions struct {
	// MinVersion is the lowest accepted TLS version, named like Go's
	// crypto/tls constants: VersionTLS10 to VersionTLS13.
	MinVersion string `json:"minVersion,omitempty"`

	// CipherSuites lists the allowed TLS 1.2 cipher suites by their IANA
	// names. Not allowed when MinVersion is VersionTLS13.
	CipherSuites []string `json:"cipherSuites,omitempty"`

	// CurvePreferences lists key-exchange groups by their numeric TLS IDs
	// (e.g. 29 for X25519), in order of preference.
	CurvePreferences []int32 `json:"curvePreferences,omitempty"`
}

// InternalCertManagement configures the built-in certificate management.
type InternalCertManagement struct {
	// Enable makes the manager generate, self-sign and rotate the serving
	// certificates of its webhook, metrics and visibility servers. When false
	// the certificates must be mounted by other means.
	Enable *bool `json:"enable,omitempty"`

	// WebhookServiceName is the Service name used in the certificate DNS name.
	WebhookServiceName *string `json:"webhookServiceName,omitempty"`

	// WebhookSecretName is the Secret that stores the CA and serving certificate.
	WebhookSecretName *string `json:"webhookSecretName,omitempty"`
}

// ClientConnection tunes the API server client.
type ClientConnection struct {
	// QPS is the sustained request rate; a negative value disables
	// client-side rate limiting.
	QPS *float32 `json:"qps,omitempty"`

	// Burst is the number of requests allowed above QPS for short periods.
	Burst *int32 `json:"burst,omitempty"`
}

// VisibilityServerConfiguration configures the visibility API server listener.
type VisibilityServerConfiguration struct {
	// BindAddress is the IP address to listen on; all interfaces when unset.
	BindAddress *string `json:"bindAddress,omitempty"`

	// BindPort is the TCP port to listen on.
	BindPort *int32 `json:"bindPort,omitempty"`
}

// ObjectRetentionPolicies configures automatic deletion of objects.
type ObjectRetentionPolicies struct {
	// Workloads configures deletion of Workloads and their jobs.
	Workloads *WorkloadRetentionPolicy `json:"workloads,omitempty"`
}

// WorkloadRetentionPolicy says when Workloads (or their jobs) are deleted.
// A nil duration disables that deletion; zero deletes at once.
type WorkloadRetentionPolicy struct {
	// AfterFinished is how long a finished Workload is kept.
	AfterFinished *metav1.Duration `json:"afterFinished,omitempty"`

	// AfterDeactivatedByKueue is how long the job owning a Workload that the
	// manager deactivated is kept before it is deleted (the deletion cascades
	// to the job's children).
	AfterDeactivatedByKueue *metav1.Duration `json:"afterDeactivatedByKueue,omitempty"`
}
