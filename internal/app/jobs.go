package app

import (
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/all"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// jobIntegrations returns the enabled integrations and their shared
// options.
func jobIntegrations(cfg *configapi.Configuration) ([]jobframework.Integration, jobframework.Options, error) {
	enabled, err := jobframework.Enabled(cfg, all.Integrations())
	if err != nil {
		return nil, jobframework.Options{}, err
	}
	opts, err := jobframework.OptionsFrom(cfg)
	return enabled, opts, err
}

// setupJobs starts a reconciler per enabled job integration.
func setupJobs(mgr ctrl.Manager, cfg *configapi.Configuration) error {
	enabled, opts, err := jobIntegrations(cfg)
	if err != nil {
		return err
	}
	return jobframework.SetupControllers(mgr, enabled, opts)
}

// JobWebhooks returns the setup of the enabled integrations' webhooks, for
// Options.Webhooks.
func JobWebhooks(cfg *configapi.Configuration) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		enabled, opts, err := jobIntegrations(cfg)
		if err != nil {
			return err
		}
		if err := jobframework.SetupWebhooks(mgr, enabled, opts); err != nil {
			return err
		}
		jobframework.SetupNoopWebhooks(mgr, all.Integrations(), enabled)
		return nil
	}
}

// managedPods keeps the manager's pod informer to the pods Kuota manages
// (labelled kueue.x-k8s.io/managed=true): the pod integrations watch
// pods, and caching every pod of the cluster would cost memory in
// proportion to the cluster, not to the queue. Other pods are read from
// the API server where needed.
func managedPods() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{jobframework.ManagedLabel: jobframework.ManagedLabelValue})}
}
