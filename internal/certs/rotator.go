package certs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups="",namespace=kueue-system,resources=secrets,verbs=get;create;update

// Default timings of the Rotator.
const (
	// DefaultInterval is how often a replica re-reads the Secret and the
	// webhook configurations: it picks up a certificate another replica
	// renewed and repairs a CA bundle that was overwritten.
	DefaultInterval = time.Minute
	// maxRetryDelay caps the backoff after a failed pass.
	maxRetryDelay = 30 * time.Second
)

// Rotator keeps the webhook server's certificates. Every replica runs one
// (it needs no leadership: followers serve webhooks too). Each pass reads
// the Secret, renews what is invalid or close to expiry (a compare-and-swap
// write, so that concurrent replicas settle on one CA), writes tls.crt and
// tls.key into CertDir, and injects the CA bundle into the webhook
// configurations. Ready is closed after the first successful pass; a
// failing pass is retried with backoff and never stops the manager.
type Rotator struct {
	// Reader reads the Secret and the webhook configurations from the API
	// server (not from an informer cache: the manager does not watch
	// Secrets or webhook configurations).
	Reader client.Reader
	// Writer creates and updates them.
	Writer client.Writer
	// Secret holds the CA and the serving certificate.
	Secret types.NamespacedName
	// CertDir receives tls.crt, tls.key and ca.crt.
	CertDir string
	// Spec names the hosts of the serving certificate and the lifetimes.
	Spec Spec
	// Webhooks get the CA bundle.
	Webhooks WebhookConfigurations
	// Interval between passes (DefaultInterval when zero).
	Interval time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	once  sync.Once
	ready chan struct{}
}

// ServiceHost is the DNS name a Service's clients use inside the cluster.
func ServiceHost(service, namespace string) string {
	return service + "." + namespace + ".svc"
}

func (r *Rotator) init() { r.once.Do(func() { r.ready = make(chan struct{}) }) }

// Ready is closed once certificates are in CertDir and the CA bundle has
// been injected.
func (r *Rotator) Ready() <-chan struct{} {
	r.init()
	return r.ready
}

// NeedLeaderElection is false: every replica keeps its certificates.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Start runs passes until ctx ends.
func (r *Rotator) Start(ctx context.Context) error {
	r.init()
	log := ctrl.LoggerFrom(ctx).WithName("cert-rotator")
	delay := time.Second
	for {
		wait := r.Interval
		if wait <= 0 {
			wait = DefaultInterval
		}
		if err := r.Sync(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			log.Error(err, "Webhook certificates are not in place; retrying", "after", delay)
			wait, delay = delay, min(2*delay, maxRetryDelay)
		} else {
			delay = time.Second
			select {
			case <-r.ready:
			default:
				log.Info("Webhook certificates are in place", "dir", r.CertDir, "secret", r.Secret.String())
				close(r.ready)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sync makes one pass: Secret, files, CA bundle.
func (r *Rotator) Sync(ctx context.Context) error {
	now := r.now()
	data, err := r.ensureSecret(ctx, now)
	if err != nil {
		return err
	}
	bundle, err := CABundle(data, now)
	if err != nil {
		return fmt.Errorf("secret %s: %w", r.Secret, err)
	}
	files := map[string][]byte{CertKey: data[CertKey], KeyKey: data[KeyKey], CACertKey: bundle}
	if _, err := WriteFiles(r.CertDir, files, CACertKey, CertKey, KeyKey); err != nil {
		return err
	}
	return InjectCABundle(ctx, r.Reader, r.Writer, r.Webhooks, bundle)
}

// errRace means another replica wrote the Secret first.
var errRace = errors.New("the Secret changed while renewing it")

// ensureSecret returns the Secret's certificate data, renewed and written
// back when needed. When another replica writes first, it reads theirs.
func (r *Rotator) ensureSecret(ctx context.Context, now time.Time) (map[string][]byte, error) {
	var err error
	for range 3 {
		var data map[string][]byte
		if data, err = r.ensureSecretOnce(ctx, now); !errors.Is(err, errRace) {
			return data, err
		}
	}
	return nil, err
}

func (r *Rotator) ensureSecretOnce(ctx context.Context, now time.Time) (map[string][]byte, error) {
	secret := &corev1.Secret{}
	err := r.Reader.Get(ctx, r.Secret, secret)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return nil, fmt.Errorf("reading secret %s: %w", r.Secret, err)
	}
	data, changed, err := Renew(secret.Data, r.Spec, now)
	if err != nil {
		return nil, err
	}
	if !changed {
		return data, nil
	}
	secret.Data = data
	if missing {
		secret = &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: data}
		secret.Name, secret.Namespace = r.Secret.Name, r.Secret.Namespace
		err = r.Writer.Create(ctx, secret, client.FieldOwner(FieldOwner))
	} else {
		// The read resourceVersion makes this a compare-and-swap.
		err = r.Writer.Update(ctx, secret, client.FieldOwner(FieldOwner))
	}
	switch {
	case apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
		return nil, errRace
	case err != nil:
		return nil, fmt.Errorf("writing secret %s: %w", r.Secret, err)
	}
	ctrl.LoggerFrom(ctx).Info("Issued webhook certificates", "secret", r.Secret.String(), "hosts", r.Spec.Hosts)
	return data, nil
}

func (r *Rotator) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
