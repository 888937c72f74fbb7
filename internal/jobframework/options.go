package jobframework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Options are the Configuration's settings every job kind shares.
type Options struct {
	// ManageJobsWithoutQueueName makes jobs without a queue name managed
	// too (they then wait, as no LocalQueue admits them).
	ManageJobsWithoutQueueName bool
	// NamespaceSelector limits which namespaces' jobs are managed at all
	// (managedJobsNamespaceSelector; by default every namespace but
	// kube-system and the manager's); nil selects every namespace.
	NamespaceSelector labels.Selector
	// WaitForPodsReady makes the reconciler maintain the Workload's
	// PodsReady condition.
	WaitForPodsReady bool
	// LabelKeysToCopy are job labels copied onto its Workload at creation.
	LabelKeysToCopy []string
	// Enabled are the enabled integrations (set by SetupControllers and
	// SetupWebhooks): the pod integration finds there the parents whose
	// pods it leaves alone or completes.
	Enabled []Integration
	// External are the kinds of integrations.externalFrameworks: their
	// own controllers create and follow their Workloads (see
	// docs/integrations/external.md). Kuota runs nothing for them, but
	// leaves their children (Jobs, pods) alone, as it does a queued
	// kind's.
	External []schema.GroupKind
	// ElasticJobs lets the jobs of the kinds that support it
	// (Integration.Elastic) opt in to changing their pod counts while
	// they run (gate ElasticJobsViaWorkloadSlices, on by default).
	ElasticJobs bool
}

// EnabledIntegration returns the enabled integration of that name.
func (o Options) EnabledIntegration(name string) (Integration, bool) {
	for _, in := range o.Enabled {
		if in.Name == name {
			return in, true
		}
	}
	return Integration{}, false
}

// EnabledKind returns the enabled integration of that kind.
func (o Options) EnabledKind(gk schema.GroupKind) (Integration, bool) {
	for _, in := range o.Enabled {
		if in.GVK.GroupKind() == gk {
			return in, true
		}
	}
	return Integration{}, false
}

// OptionsFrom reads the shared options from a defaulted Configuration.
func OptionsFrom(cfg *configapi.Configuration) (Options, error) {
	o := Options{
		ManageJobsWithoutQueueName: cfg.ManageJobsWithoutQueueName,
		WaitForPodsReady:           cfg.WaitForPodsReady != nil && cfg.WaitForPodsReady.Timeout.Duration > 0,
	}
	if on, set := cfg.FeatureGates["ElasticJobsViaWorkloadSlices"]; !set || on {
		o.ElasticJobs = true
	}
	if cfg.Integrations != nil {
		o.LabelKeysToCopy = cfg.Integrations.LabelKeysToCopy
		for i, name := range cfg.Integrations.ExternalFrameworks {
			k, ok := configapi.ParseExternalFramework(name)
			if !ok {
				return Options{}, fmt.Errorf("integrations.externalFrameworks[%d]: %q is not in the form Kind.version.group", i, name)
			}
			o.External = append(o.External, k.GroupKind())
		}
	}
	if sel := cfg.ManagedJobsNamespaceSelector; sel != nil {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return Options{}, fmt.Errorf("managedJobsNamespaceSelector: %w", err)
		}
		o.NamespaceSelector = s
	}
	return o, nil
}

// QueueName returns the LocalQueue a job names ("" when none).
func QueueName(obj client.Object) string {
	return obj.GetLabels()[QueueNameLabel]
}

// namespaceSelected reports whether the namespace matches the selector.
func (o Options) namespaceSelected(ctx context.Context, c client.Reader, ns string) (bool, error) {
	if o.NamespaceSelector == nil || o.NamespaceSelector.Empty() {
		return true, nil
	}
	var n corev1.Namespace
	if err := c.Get(ctx, types.NamespacedName{Name: ns}, &n); err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	return o.NamespaceSelector.Matches(labels.Set(n.Labels)), nil
}

// Managed reports whether Kuota queues the job: its namespace matches the
// managed-jobs selector, it names a LocalQueue or jobs without one are
// managed too, and no queued parent controls it.
func (o Options) Managed(ctx context.Context, c client.Reader, obj client.Object) (bool, error) {
	if (QueueName(obj) == "" && !o.ManageJobsWithoutQueueName) || o.ControlledByQueuedKind(obj) {
		return false, nil
	}
	return o.namespaceSelected(ctx, c, obj.GetNamespace())
}

// NamespaceManaged reports whether the namespace matches
// managedJobsNamespaceSelector.
func (o Options) NamespaceManaged(ctx context.Context, c client.Reader, ns string) (bool, error) {
	return o.namespaceSelected(ctx, c, ns)
}

// DefaultQueueExists reports whether the namespace has the LocalQueue
// "default", which jobs without a queue name are sent to.
func DefaultQueueExists(ctx context.Context, c client.Reader, ns string) bool {
	var lq kueue.LocalQueue
	return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: DefaultLocalQueueName}, &lq) == nil
}
