package certs

import (
	"bytes"
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
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
// webhook gets the CA bundle.
type WebhookConfigurations struct {
	Mutating, Validating []string
}

// DefaultWebhookConfigurations are the bundle's two configurations.
func DefaultWebhookConfigurations() WebhookConfigurations {
	return WebhookConfigurations{
		Mutating:   []string{MutatingWebhookConfigurationName},
		Validating: []string{ValidatingWebhookConfigurationName},
	}
}

// InjectCABundle sets caBundle on every webhook of the named configurations
// and writes those that changed. A configuration that does not exist is
// skipped: nothing calls a webhook that is not registered, and the next
// injection covers it once it is created.
func InjectCABundle(ctx context.Context, r client.Reader, w client.Writer, names WebhookConfigurations, bundle []byte) error {
	for _, name := range names.Mutating {
		cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := inject(ctx, r, w, name, cfg, func() bool {
			changed := false
			for i := range cfg.Webhooks {
				changed = setBundle(&cfg.Webhooks[i].ClientConfig, bundle) || changed
			}
			return changed
		}); err != nil {
			return err
		}
	}
	for _, name := range names.Validating {
		cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := inject(ctx, r, w, name, cfg, func() bool {
			changed := false
			for i := range cfg.Webhooks {
				changed = setBundle(&cfg.Webhooks[i].ClientConfig, bundle) || changed
			}
			return changed
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
		return fmt.Errorf("reading webhook configuration %s: %w", name, err)
	}
	if !obj.GetDeletionTimestamp().IsZero() || !set() {
		return nil
	}
	if err := w.Update(ctx, obj, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("injecting the CA bundle into webhook configuration %s: %w", name, err)
	}
	return nil
}

func setBundle(cc *admissionregistrationv1.WebhookClientConfig, bundle []byte) bool {
	if bytes.Equal(cc.CABundle, bundle) {
		return false
	}
	cc.CABundle = bytes.Clone(bundle)
	return true
}
