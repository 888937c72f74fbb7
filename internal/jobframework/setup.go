package jobframework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
)

// Enabled picks, from the integrations Kuota has, those the
// Configuration's integrations.frameworks names. An unknown name is an
// error that lists the known ones.
func Enabled(cfg *configapi.Configuration, available []Integration) ([]Integration, error) {
	var names []string
	if cfg.Integrations != nil {
		names = cfg.Integrations.Frameworks
	}
	var out []Integration
	for i, name := range names {
		idx := slices.IndexFunc(available, func(in Integration) bool { return in.Name == name })
		if idx < 0 {
			known := make([]string, 0, len(available))
			for _, in := range available {
				known = append(known, in.Name)
			}
			return nil, fmt.Errorf("integrations.frameworks[%d]: unknown framework %q (known: %s)", i, name, strings.Join(known, ", "))
		}
		out = append(out, available[idx])
	}
	return out, nil
}

// AddToScheme registers the types of the integrations that bring their own.
func AddToScheme(scheme *runtime.Scheme, integrations []Integration) error {
	for _, in := range integrations {
		if in.AddToScheme == nil {
			continue
		}
		if err := in.AddToScheme(scheme); err != nil {
			return fmt.Errorf("registering %s: %w", in.Name, err)
		}
	}
	return nil
}

// SetupControllers registers the index of Workloads by job and starts a
// job reconciler for each integration.
func SetupControllers(mgr ctrl.Manager, integrations []Integration, opts Options) error {
	if len(integrations) == 0 {
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kueue.Workload{}, IndexWorkloadJob, IndexWorkloadByJob); err != nil {
		return fmt.Errorf("indexing Workloads by job: %w", err)
	}
	for _, in := range integrations {
		r := &Reconciler{
			Client: mgr.GetClient(), PodReader: mgr.GetAPIReader(), Writer: &apply.Writer{Client: mgr.GetClient()},
			Recorder: mgr.GetEventRecorderFor("kueue-job-controller"), Integration: in, Options: opts,
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the %s reconciler: %w", in.Name, err)
		}
	}
	return nil
}

// SetupWebhooks registers each integration's webhooks.
func SetupWebhooks(mgr ctrl.Manager, integrations []Integration, opts Options) error {
	for _, in := range integrations {
		if in.SetupWebhook == nil {
			continue
		}
		if err := in.SetupWebhook(mgr, opts); err != nil {
			return fmt.Errorf("setting up the %s webhooks: %w", in.Name, err)
		}
	}
	return nil
}
