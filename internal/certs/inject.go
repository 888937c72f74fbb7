package certs

import (
	"bytes"
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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
// webhook gets the CA bundle, and the CRDs whose conversion webhook does.
type WebhookConfigurations struct {
	Mutating, Validating []string
	// CRDs are names of CustomResourceDefinitions; only a conversion
	// webhook given by clientConfig gets the bundle.
	CRDs []string
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

func setBundle(cc *admissionregistrationv1.WebhookClientConfig, bundle []byte) bool {
	if bytes.Equal(cc.CABundle, bundle) {
		return false
	}
	cc.CABundle = bytes.Clone(bundle)
	return true
}
