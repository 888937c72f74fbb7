package app

import (
	ctrl "sigs.k8s.io/controller-runtime"

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
		return jobframework.SetupWebhooks(mgr, enabled, opts)
	}
}
