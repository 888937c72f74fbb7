package certs

import (
	"bytes"
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the webhook configurations in the install bundle (the generated
// names with the bundle's "kueue-" prefix), as Kueue names them.
const (
	MutatingWebhookConfigurationName   = "kueue-mutating-webhook-configuration"
	ValidatingWebhookConfigurationName = "kueue-validating-webhook-configuration"
)

// FieldOwner is the field manager of the CA bundles the manager writes.
const FieldOwner = "kuota-cert-rotator"

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=kueue-mutating-webhook-configuration,verbs=get;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=kueue-validating-webhook-configuration,verbs=get;update

// WebhookConfigurations names the webhook configurations whose every
// webhook gets the CA bundle, and the CRDs whose conversion webhook does.
type WebhookConfigurations struct {
	Mutating, Validating []string
	// CRDs are names of CustomResourceDefinitions; only a conversion
	// webhook given by clientConfig gets the bundle.
	CRDs []string
	// Served reports whether the manager serves a webhook's service path;
	// the webhooks of the configurations it does not serve (those of a
	// job framework that is not enabled) are removed, so that the API
	// server does not send every Pod, Deployment or StatefulSet write to
	// a handler that is not there, and fail it. Nil keeps every webhook.
	Served func(path string) bool
}

// DefaultWebhookConfigurations are the bundle's two configurations and the
// given CRDs (those the manager converts).
func DefaultWebhookConfigurations(crds ...string) WebhookConfigurations {
	return WebhookConfigurations{
		Mutating:   []string{MutatingWebhookConfigurationName},
		Validating: []string{ValidatingWebhookConfigurationName},
		CRDs:       crds,
	}
}

// InjectCABundle sets caBundle on every webhook of the named configurations
// (and removes those names.Served says are not served) and writes those
// that changed. A configuration that does not exist is
// skipped: nothing calls a webhook that is not registered, and the next
// injection covers it once it is created.
func InjectCABundle(ctx context.Context, r client.Reader, w client.Writer, names WebhookConfigurations, bundle []byte) error {
	for _, name := range names.Mutating {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := inject(ctx, r, w, name, cfg, func() bool {
			var changed bool
			cfg.Webhooks, changed = servedWithBundle(cfg.Webhooks, name, names.Served, bundle,
				func(w *admissionregistrationv1.MutatingWebhook) (string, *admissionregistrationv1.WebhookClientConfig) {
					return w.Name, &w.ClientConfig
				})
			return changed
		}); err != nil {
			return err
		}
	}
	for _, name := range names.Validating {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := inject(ctx, r, w, name, cfg, func() bool {
			var changed bool
			cfg.Webhooks, changed = servedWithBundle(cfg.Webhooks, name, names.Served, bundle,
				func(w *admissionregistrationv1.ValidatingWebhook) (string, *admissionregistrationv1.WebhookClientConfig) {
					return w.Name, &w.ClientConfig
				})
			return changed
		}); err != nil {
			return err
		}
	}
	for _, name := range names.CRDs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := inject(ctx, r, w, name, crd, func() bool {
			c := crd.Spec.Conversion
			if c == nil || c.Strategy != apiextensionsv1.WebhookConverter || c.Webhook == nil || c.Webhook.ClientConfig == nil {
				return false
			}
			if bytes.Equal(c.Webhook.ClientConfig.CABundle, bundle) {
				return false
			}
			c.Webhook.ClientConfig.CABundle = bytes.Clone(bundle)
			return true
		}); err != nil {
			return err
		}
	}
	return nil
}

// inject reads obj by name, lets set change it and writes it when set
// reports a change. The write carries the read resourceVersion.
func inject(ctx context.Context, r client.Reader, w client.Writer, name string, obj client.Object, set func() bool) error {
	if err := r.Get(ctx, types.NamespacedName{Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", name, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() || !set() {
		return nil
	}
	if err := w.Update(ctx, obj, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("injecting the CA bundle into %s: %w", name, err)
	}
	return nil
}

// servedWithBundle keeps the webhooks whose path is served, each with
// bundle, and reports whether anything changed.
func servedWithBundle[W any](hooks []W, config string, served func(string) bool, bundle []byte,
	parts func(*W) (string, *admissionregistrationv1.WebhookClientConfig)) ([]W, bool) {
	changed := false
	kept := hooks[:0]
	for i := range hooks {
		name, cc := parts(&hooks[i])
		if served != nil && cc.Service != nil && cc.Service.Path != nil && !served(*cc.Service.Path) {
			ctrl.Log.WithName("cert-rotator").Info("Removing a webhook this manager does not serve (its integration is not enabled)",
				"configuration", config, "webhook", name, "path", *cc.Service.Path)
			changed = true
			continue
		}
		changed = setBundle(cc, bundle) || changed
		kept = append(kept, hooks[i])
	}
	return kept, changed
}

func setBundle(cc *admissionregistrationv1.WebhookClientConfig, bundle []byte) bool {
	if bytes.Equal(cc.CABundle, bundle) {
		return false
	}
	cc.CABundle = bytes.Clone(bundle)
	return true
}
