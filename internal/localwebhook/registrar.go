package localwebhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// Host is where local mode serves webhooks, and the hosts of its
// certificate.
const Host = "127.0.0.1"

// CertificateHosts are the names the loopback serving certificate is valid
// for.
var CertificateHosts = []string{Host, "localhost", "::1"}

// NamePrefix is the install bundle's name prefix, so that local mode
// registers the configurations under the bundle's names.
const NamePrefix = "kueue-"

// Label marks the configurations local mode registered; only those are
// removed on shutdown.
const Label = "kuota.dev/local-webhooks"

// FieldOwner is the field manager of local mode's writes.
const FieldOwner = "kuota-local-webhooks"

// Registrar registers the webhook configurations once the local webhook
// server answers, and removes them when the manager stops (a killed
// manager leaves them behind; the next start overwrites them, and
// `kuota dev down` deletes the cluster anyway).
type Registrar struct {
	// Reader and Writer reach the API server.
	Reader client.Reader
	Writer client.Writer
	// Definitions are registered under NamePrefix + their names.
	Definitions *Definitions
	// Port of the local webhook server.
	Port int
	// CABundle verifies the server's certificate.
	CABundle []byte
	// ServerStarted reports whether the webhook server accepts connections.
	ServerStarted healthz.Checker
	// Served reports whether the server has a handler for a path; webhooks
	// without one are left out (a disabled integration, or a setup not
	// wired yet), since the API server would get 404s. Nil means all.
	Served func(path string) bool
	// ConversionPath is where the server converts between API versions,
	// and ConvertedCRDs the CRDs whose conversion is pointed there.
	ConversionPath string
	ConvertedCRDs  []string

	registered atomic.Bool
}

// NeedLeaderElection is false: the webhooks must be reachable on any
// replica.
func (r *Registrar) NeedLeaderElection() bool { return false }

// Check is a readiness check: ready once the configurations are registered.
func (r *Registrar) Check(*http.Request) error {
	if !r.registered.Load() {
		return errors.New("local webhook configurations are not registered yet")
	}
	return nil
}

// Start waits for the server, registers the configurations, and removes
// them when ctx ends.
func (r *Registrar) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("local-webhooks")
	if err := r.waitForServer(ctx); err != nil {
		return nil // stopped before the server came up
	}
	delay := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := r.register(ctx)
		if err == nil {
			r.registered.Store(true)
			log.Info("Registered webhook configurations", "url", r.baseURL())
			break
		}
		log.Error(err, "Registering local webhook configurations; retrying", "after", delay)
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
	<-ctx.Done()
	// Also after a registration cut short: some configurations may be in.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := r.unregister(cleanup); err != nil {
		log.Error(err, "Removing local webhook configurations")
	}
	return nil
}

func (r *Registrar) waitForServer(ctx context.Context) error {
	for {
		if r.ServerStarted == nil || r.ServerStarted(nil) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (r *Registrar) baseURL() string { return fmt.Sprintf("https://%s:%d", Host, r.Port) }

// register creates or replaces every configuration.
func (r *Registrar) register(ctx context.Context) error {
	muts, vals, err := Configurations(r.Definitions, r.baseURL(), r.CABundle, r.Served)
	if err != nil {
		return err
	}
	if skipped := Unserved(r.Definitions, r.Served); len(skipped) > 0 {
		ctrl.LoggerFrom(ctx).Info("Leaving out webhooks that have no handler", "webhooks", skipped)
	}
	for i := range muts {
		want := &muts[i]
		if err := r.put(ctx, want, &admissionregistrationv1.MutatingWebhookConfiguration{}, func(cur client.Object) {
			cur.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks = want.Webhooks
		}); err != nil {
			return err
		}
	}
	for i := range vals {
		want := &vals[i]
		if err := r.put(ctx, want, &admissionregistrationv1.ValidatingWebhookConfiguration{}, func(cur client.Object) {
			cur.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks = want.Webhooks
		}); err != nil {
			return err
		}
	}
	return r.registerConversion(ctx)
}

// put creates want, or updates the existing object cur to want's webhooks
// and label.
func (r *Registrar) put(ctx context.Context, want, cur client.Object, copyWebhooks func(client.Object)) error {
	err := r.Reader.Get(ctx, types.NamespacedName{Name: want.GetName()}, cur)
	if apierrors.IsNotFound(err) {
		if err := r.Writer.Create(ctx, want, client.FieldOwner(FieldOwner)); err != nil {
			return fmt.Errorf("creating webhook configuration %s: %w", want.GetName(), err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading webhook configuration %s: %w", want.GetName(), err)
	}
	copyWebhooks(cur)
	labels := cur.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[Label] = "true"
	cur.SetLabels(labels)
	if err := r.Writer.Update(ctx, cur, client.FieldOwner(FieldOwner)); err != nil {
		return fmt.Errorf("updating webhook configuration %s: %w", want.GetName(), err)
	}
	return nil
}

// unregister deletes the configurations that carry Label.
func (r *Registrar) unregister(ctx context.Context) error {
	var errs []error
	for _, d := range r.Definitions.Mutating {
		errs = append(errs, r.remove(ctx, NamePrefix+d.Name, &admissionregistrationv1.MutatingWebhookConfiguration{}))
	}
	for _, d := range r.Definitions.Validating {
		errs = append(errs, r.remove(ctx, NamePrefix+d.Name, &admissionregistrationv1.ValidatingWebhookConfiguration{}))
	}
	return errors.Join(errs...)
}

func (r *Registrar) remove(ctx context.Context, name string, obj client.Object) error {
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: name}, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if obj.GetLabels()[Label] != "true" {
		return nil
	}
	return client.IgnoreNotFound(r.Writer.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}))
}

// Configurations returns defs ready to register: prefixed names, the local
// label, and every webhook whose path is served (all when served is nil)
// calling baseURL plus that path, trusting caBundle.
func Configurations(defs *Definitions, baseURL string, caBundle []byte, served func(string) bool) (
	[]admissionregistrationv1.MutatingWebhookConfiguration, []admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	muts := make([]admissionregistrationv1.MutatingWebhookConfiguration, 0, len(defs.Mutating))
	for _, d := range defs.Mutating {
		c := *d.DeepCopy()
		c.Webhooks = c.Webhooks[:0]
		for _, w := range d.Webhooks {
			cc, err := localClientConfig(w.Name, w.ClientConfig, baseURL, caBundle)
			if err != nil {
				return nil, nil, err
			}
			if isServed(w.ClientConfig, served) {
				w.ClientConfig = cc
				c.Webhooks = append(c.Webhooks, *w.DeepCopy())
			}
		}
		muts = append(muts, c)
	}
	vals := make([]admissionregistrationv1.ValidatingWebhookConfiguration, 0, len(defs.Validating))
	for _, d := range defs.Validating {
		c := *d.DeepCopy()
		c.Webhooks = c.Webhooks[:0]
		for _, w := range d.Webhooks {
			cc, err := localClientConfig(w.Name, w.ClientConfig, baseURL, caBundle)
			if err != nil {
				return nil, nil, err
			}
			if isServed(w.ClientConfig, served) {
				w.ClientConfig = cc
				c.Webhooks = append(c.Webhooks, *w.DeepCopy())
			}
		}
		vals = append(vals, c)
	}
	for i := range muts {
		localMeta(&muts[i])
	}
	for i := range vals {
		localMeta(&vals[i])
	}
	return muts, vals, nil
}

func localMeta(obj client.Object) {
	obj.SetName(NamePrefix + obj.GetName())
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[Label] = "true"
	obj.SetLabels(labels)
}

func isServed(cc admissionregistrationv1.WebhookClientConfig, served func(string) bool) bool {
	return served == nil || (cc.Service != nil && cc.Service.Path != nil && served(*cc.Service.Path))
}

// Unserved names the webhooks of defs whose path is not served.
func Unserved(defs *Definitions, served func(string) bool) []string {
	var out []string
	for _, d := range defs.Mutating {
		for _, w := range d.Webhooks {
			if !isServed(w.ClientConfig, served) {
				out = append(out, w.Name)
			}
		}
	}
	for _, d := range defs.Validating {
		for _, w := range d.Webhooks {
			if !isServed(w.ClientConfig, served) {
				out = append(out, w.Name)
			}
		}
	}
	return out
}

func localClientConfig(webhook string, cc admissionregistrationv1.WebhookClientConfig, baseURL string, caBundle []byte) (
	admissionregistrationv1.WebhookClientConfig, error) {
	if cc.Service == nil || cc.Service.Path == nil {
		return cc, fmt.Errorf("webhook %s has no service path to serve locally", webhook)
	}
	url := baseURL + *cc.Service.Path
	return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}, nil
}
