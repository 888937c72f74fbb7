package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WaitForPodsReady configures all-or-nothing admission with ready pods.
type WaitForPodsReady struct {
	// Timeout is how long an admitted workload may take to reach
	// PodsReady=True before it is evicted and requeued.
	Timeout metav1.Duration `json:"timeout,omitempty"`

	// BlockAdmission, when true, holds back further admissions while an
	// admitted workload is still waiting for its pods to be ready.
	BlockAdmission *bool `json:"blockAdmission,omitempty"`

	// RequeuingStrategy controls the backoff of evicted workloads.
	RequeuingStrategy *RequeuingStrategy `json:"requeuingStrategy,omitempty"`

	// RecoveryTimeout is how long a running workload may stay at
	// PodsReady=False (for example while a failed pod is replaced) before it
	// is evicted. Defaults to Timeout; zero disables the check.
	RecoveryTimeout *metav1.Duration `json:"recoveryTimeout,omitempty"`
}

// RequeuingTimestamp names the time a requeued workload is ordered by.
type RequeuingTimestamp string

const (
	// EvictionTimestamp orders by the time of the PodsReady eviction (the default).
	EvictionTimestamp RequeuingTimestamp = "Eviction"
	// CreationTimestamp orders by the Workload's creation time.
	CreationTimestamp RequeuingTimestamp = "Creation"
)

// RequeuingStrategy controls how workloads evicted by WaitForPodsReady are
// requeued. The n-th requeue waits about base*2^(n-1) seconds, capped at max.
type RequeuingStrategy struct {
	// Timestamp selects the time used to order the requeued workload.
	Timestamp *RequeuingTimestamp `json:"timestamp,omitempty"`

	// BackoffLimitCount is the number of requeues after which the workload
	// is deactivated. Nil means requeue forever.
	BackoffLimitCount *int32 `json:"backoffLimitCount,omitempty"`

	// BackoffBaseSeconds is the base of the exponential backoff.
	BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`

	// BackoffMaxSeconds caps a single backoff.
	BackoffMaxSeconds *int32 `json:"backoffMaxSeconds,omitempty"`
}

// Integrations lists the job frameworks to manage.
type Integrations struct {
	// Frameworks are built-in framework names such as "batch/job" or "pod".
	Frameworks []string `json:"frameworks,omitempty"`

	// ExternalFrameworks are kinds managed by external controllers, written
	// as "Kind.version.group".
	ExternalFrameworks []string `json:"externalFrameworks,omitempty"`

	// LabelKeysToCopy are job label keys copied to the Workload when it is
	// created. Missing labels are skipped.
	LabelKeysToCopy []string `json:"labelKeysToCopy,omitempty"`
}

// MultiKueue configures multi-cluster dispatching.
type MultiKueue struct {
	// GCInterval is the period of the remote-object garbage collector; zero
	// disables it.
	GCInterval *metav1.Duration `json:"gcInterval,omitempty"`

	// Origin is the label value that marks objects this manager created in
	// worker clusters.
	Origin *string `json:"origin,omitempty"`

	// WorkerLostTimeout is how long a workload keeps its Ready check after
	// the connection to its worker cluster is lost.
	WorkerLostTimeout *metav1.Duration `json:"workerLostTimeout,omitempty"`

	// DispatcherName selects how worker clusters are nominated: one of the
	// two built-in dispatchers or the name of an external controller.
	DispatcherName *string `json:"dispatcherName,omitempty"`

	// ExternalFrameworks lists extra kinds handled by the generic adapter.
	ExternalFrameworks []MultiKueueExternalFramework `json:"externalFrameworks,omitempty"`

	// ClusterProfile configures access to worker clusters through the
	// ClusterProfile API.
	ClusterProfile *ClusterProfile `json:"clusterProfile,omitempty"`

	// IncrementalDispatcherConfig tunes the incremental dispatcher; only
	// valid when DispatcherName selects it.
	IncrementalDispatcherConfig *IncrementalDispatcherConfig `json:"incrementalDispatcherConfig,omitempty"`
}

const (
	// MultiKueueDispatcherModeAllAtOnce nominates every worker cluster at once.
	MultiKueueDispatcherModeAllAtOnce = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
	// MultiKueueDispatcherModeIncremental nominates worker clusters in steps.
	MultiKueueDispatcherModeIncremental = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
)

// MultiKueueExternalFramework names a kind handled by the generic adapter.
type MultiKueueExternalFramework struct {
	// Name is the kind written as "Kind.version.group".
	Name string `json:"name"`
}

// IncrementalDispatcherConfig tunes the incremental dispatcher.
type IncrementalDispatcherConfig struct {
	// StepSize is the number of worker clusters added per round.
	StepSize *int32 `json:"stepSize,omitempty"`
}

// ClusterProfile configures how worker-cluster credentials are obtained.
type ClusterProfile struct {
	// AccessProviders are exec plugins that yield worker credentials.
	AccessProviders []ClusterProfileAccessProvider `json:"accessProviders,omitempty"`

	// CredentialsProviders is the older name of AccessProviders.
	//
	// Deprecated: use AccessProviders; the two cannot be set together.
	CredentialsProviders []ClusterProfileAccessProvider `json:"credentialsProviders,omitempty"`
}

// ClusterProfileAccessProvider is one named exec credential plugin.
type ClusterProfileAccessProvider struct {
	// Name identifies the provider.
	Name string `json:"name"`

	// ExecConfig describes the plugin command, as in a kubeconfig.
	ExecConfig clientcmdapi.ExecConfig `json:"execConfig"`
}

// PreemptionStrategy names a fair-sharing preemption rule.
type PreemptionStrategy string

const (
	// LessThanOrEqualToFinalShare allows preemption when the preemptor's
	// share with the new workload stays at or below the preemptee's share
	// without the preempted workload.
	LessThanOrEqualToFinalShare PreemptionStrategy = "LessThanOrEqualToFinalShare"
	// LessThanInitialShare allows preemption when the preemptor's share with
	// the new workload stays strictly below the preemptee's current share.
	LessThanInitialShare PreemptionStrategy = "LessThanInitialShare"
)

// FairSharing enables fair sharing; its presence in the file turns it on.
type FairSharing struct {
	// PreemptionStrategies are tried in order until the incoming workload
	// fits. Allowed lists: [LessThanOrEqualToFinalShare],
	// [LessThanInitialShare], or both in that order.
	PreemptionStrategies []PreemptionStrategy `json:"preemptionStrategies,omitempty"`
}

// AdmissionFairSharing orders workloads by the decayed historical usage of
// their LocalQueue; its presence in the file turns it on.
type AdmissionFairSharing struct {
	// UsageHalfLifeTime is the half-life of recorded usage; zero forgets
	// usage immediately.
	UsageHalfLifeTime metav1.Duration `json:"usageHalfLifeTime,omitempty"`

	// UsageSamplingInterval is how often usage is sampled.
	UsageSamplingInterval metav1.Duration `json:"usageSamplingInterval,omitempty"`

	// ResourceWeights weighs each resource when usage is summed; resources
	// not listed weigh 1.
	ResourceWeights map[corev1.ResourceName]float64 `json:"resourceWeights,omitempty"`
}

// QuotaCheckStrategy says how requests for resources a ClusterQueue does not
// declare are treated.
type QuotaCheckStrategy string

const (
	// QuotaCheckBlockUndeclared makes such workloads inadmissible (the default).
	QuotaCheckBlockUndeclared QuotaCheckStrategy = "BlockUndeclared"
	// QuotaCheckIgnoreUndeclared ignores undeclared resources.
	QuotaCheckIgnoreUndeclared QuotaCheckStrategy = "IgnoreUndeclared"
)

// Resources controls how pod requests become quota usage.
type Resources struct {
	// QuotaCheckStrategy treats resources a ClusterQueue does not declare.
	QuotaCheckStrategy *QuotaCheckStrategy `json:"quotaCheckStrategy,omitempty"`

	// ExcludeResourcePrefixes are resource-name prefixes ignored for quota.
	ExcludeResourcePrefixes []string `json:"excludeResourcePrefixes,omitempty"`

	// Transformations rewrite requested resources before quota is checked.
	// Inputs must be unique.
	Transformations []ResourceTransformation `json:"transformations,omitempty"`

	// DeviceClassMappings map DRA device classes to quota resource names.
	DeviceClassMappings []DeviceClassMapping `json:"deviceClassMappings,omitempty"`
}

// ResourceTransformationStrategy says whether a transformed input is kept.
type ResourceTransformationStrategy string

const (
	// Retain keeps the input resource next to the outputs (the default).
	Retain ResourceTransformationStrategy = "Retain"
	// Replace drops the input resource.
	Replace ResourceTransformationStrategy = "Replace"
)

// ResourceTransformation maps one requested resource to other resources.
type ResourceTransformation struct {
	// Input is the requested resource to transform.
	Input corev1.ResourceName `json:"input"`

	// Strategy keeps or drops the input.
	Strategy *ResourceTransformationStrategy `json:"strategy,omitempty"`

	// MultiplyBy, when set, names another requested resource whose amount
	// multiplies the input amount.
	MultiplyBy corev1.ResourceName `json:"multiplyBy,omitempty"`

	// Outputs are added per unit of input. Empty outputs with Replace make
	// the input invisible to quota.
	Outputs corev1.ResourceList `json:"outputs,omitempty"`
}

// DeviceClassMapping maps DRA device classes to one quota resource name.
type DeviceClassMapping struct {
	// Name is the resource name used in ClusterQueue quotas.
	Name corev1.ResourceName `json:"name"`

	// DeviceClassNames are the DeviceClasses counted under Name (1 to 8).
	DeviceClassNames []corev1.ResourceName `json:"deviceClassNames"`

	// Sources, when set, count a device counter or capacity instead of
	// whole devices.
	Sources []DeviceClassSourceConfig `json:"sources,omitempty"`
}

// DeviceClassSourceConfig holds exactly one of Counter or Capacity.
type DeviceClassSourceConfig struct {
	// Counter counts a shared counter of partitionable devices.
	Counter *DeviceClassCounterSource `json:"counter,omitempty"`

	// Capacity counts a consumable capacity of devices.
	Capacity *DeviceClassCapacitySource `json:"capacity,omitempty"`
}

// DeviceClassCounterSource reads a shared counter of partitionable devices.
type DeviceClassCounterSource struct {
	// Name is the counter name (a DNS label).
	Name string `json:"name"`

	// Driver is the DRA driver that publishes the counter.
	Driver string `json:"driver"`

	// DeviceSelector picks the devices the counter applies to.
	DeviceSelector resourcev1.DeviceSelector `json:"deviceSelector"`
}

// DeviceClassCapacitySource reads a consumable capacity of devices.
type DeviceClassCapacitySource struct {
	// Name is the capacity name.
	Name resourcev1.QualifiedName `json:"name"`

	// Driver is the DRA driver that publishes the capacity.
	Driver string `json:"driver"`

	// DeviceSelector picks the devices the capacity applies to.
	DeviceSelector resourcev1.DeviceSelector `json:"deviceSelector"`
}
