package jobframework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
)

// Enabled picks, from the integrations Kuota has, those the
// Configuration's integrations.frameworks names, then those they require
// (the pod integration for Deployments, StatefulSets and
// LeaderWorkerSets, as Kueue enables it implicitly). An unknown name is an
// error that lists the known ones.
func Enabled(cfg *configapi.Configuration, available []Integration) ([]Integration, error) {
	var names []string
	if cfg.Integrations != nil {
		names = cfg.Integrations.Frameworks
	}
	find := func(name string) int {
		return slices.IndexFunc(available, func(in Integration) bool { return in.Name == name })
	}
	var out []Integration
	has := func(name string) bool {
		return slices.ContainsFunc(out, func(in Integration) bool { return in.Name == name })
	}
	for i, name := range names {
		idx := find(name)
		if idx < 0 {
			known := make([]string, 0, len(available))
			for _, in := range available {
				known = append(known, in.Name)
			}
			return nil, fmt.Errorf("integrations.frameworks[%d]: unknown framework %q (known: %s)", i, name, strings.Join(known, ", "))
		}
		if !has(name) {
			out = append(out, available[idx])
		}
	}
	for i := 0; i < len(out); i++ {
		for _, req := range out[i].Requires {
			if has(req) {
				continue
			}
			idx := find(req)
			if idx < 0 {
				return nil, fmt.Errorf("framework %q requires %q, which Kuota does not have", out[i].Name, req)
			}
			out = append(out, available[idx])
		}
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
// controller for each integration: its own (SetupReconciler) or the
// generic Job reconciler; an integration whose kind is not served yet
// starts once it is (see crdwait.go).
func SetupControllers(mgr ctrl.Manager, integrations []Integration, opts Options) error {
	if len(integrations) == 0 {
		return nil
	}
	opts.Enabled = integrations
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &kueue.Workload{}, IndexWorkloadJob, IndexWorkloadByJob); err != nil {
		return fmt.Errorf("indexing Workloads by job: %w", err)
	}
	for _, in := range integrations {
		if in.SetupReconciler == nil && in.NewJob == nil {
			continue
		}
		if err := setupWhenServed(mgr, in, func() error { return setupController(mgr, in, opts) }); err != nil {
			return err
		}
	}
	return nil
}

// setupController starts one integration's controller: its own
// (SetupReconciler) or the generic Job reconciler.
func setupController(mgr ctrl.Manager, in Integration, opts Options) error {
	if in.SetupReconciler != nil {
		if err := in.SetupReconciler(mgr, opts); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", in.Name, err)
		}
		return nil
	}
	r := &Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Writer: &apply.Writer{Client: mgr.GetClient()},
		Recorder: mgr.GetEventRecorderFor("kueue-job-controller"), Integration: in, Options: opts,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the %s reconciler: %w", in.Name, err)
	}
	return nil
}

// SetupWebhooks registers each integration's webhooks.
func SetupWebhooks(mgr ctrl.Manager, integrations []Integration, opts Options) error {
	opts.Enabled = integrations
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

// NoopWebhook is the handler SetupNoopWebhooks serves: it allows
// everything. Its paths do not count as served: the manager removes their
// webhooks from its configurations (internal/certs), and local mode does
// not register them.
type NoopWebhook struct{ *admission.Webhook }

// SetupNoopWebhooks serves, for each integration with webhooks that is not
// enabled, webhooks that allow everything at its paths. The install
// bundle declares every integration's webhooks, fail-closed: until the
// manager has removed those of disabled integrations (at its first
// certificate pass), and after a re-apply of the bundle until its next,
// these keep a disabled integration's kind (every pod, for the pod
// integration) creatable.
func SetupNoopWebhooks(mgr ctrl.Manager, available, enabled []Integration) {
	srv := mgr.GetWebhookServer()
	allow := NoopWebhook{&admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Allowed("")
	})}}
	for _, in := range available {
		if in.SetupWebhook == nil || slices.ContainsFunc(enabled, func(e Integration) bool { return e.Name == in.Name }) {
			continue
		}
		srv.Register(WebhookPath("mutate", in.GVK), allow)
		srv.Register(WebhookPath("validate", in.GVK), allow)
	}
}

// WebhookPath is the path controller-runtime serves a kind's webhook at:
// /<verb>-<group with dashes>-<version>-<lower-case kind>.
func WebhookPath(verb string, gvk schema.GroupVersionKind) string {
	return "/" + verb + "-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}
