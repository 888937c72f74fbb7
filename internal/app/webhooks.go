package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/conversion"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/localwebhook"
)

// webhooksEnabled: the webhook server, and whatever provides its
// certificates, exist only when something will be served. Managers built
// without Options.Webhooks (the in-process test managers) stay free of
// them: no listener, no Secret, no webhook configuration.
// A standalone manager (no namespace for the certificate's Secret) serves
// none, unless in local mode, whose certificate stays on disk.
func webhooksEnabled(opts Options) bool {
	return opts.LocalWebhooks || (!opts.Standalone && len(opts.Webhooks) > 0)
}

// webhookParts is the webhook server and where its certificates come from:
// the cert rotator (internalCertManagement.enable), local mode's loopback
// certificates, or files mounted into webhook.certDir (cert-manager).
type webhookParts struct {
	server    *gatedServer
	rotator   *certs.Rotator
	registrar *localwebhook.Registrar
}

// newWebhookParts builds the server from the Configuration, before the
// manager exists (the manager takes the server as an option).
func newWebhookParts(opts Options) (*webhookParts, error) {
	cfg := opts.Config
	tlsOpts, err := tlsOptions(cfg.TLS)
	if err != nil {
		return nil, err
	}
	so := webhook.Options{Host: cfg.Webhook.Host, Port: ptr.Deref(cfg.Webhook.Port, configapi.DefaultWebhookPort),
		CertDir: cfg.Webhook.CertDir, CertName: certs.CertKey, KeyName: certs.KeyKey, TLSOpts: tlsOpts}
	parts := &webhookParts{}
	var wait func(context.Context) error
	icm := cfg.InternalCertManagement
	switch {
	case opts.LocalWebhooks:
		so.Host = localwebhook.Host
		bundle, err := certs.EnsureDir(so.CertDir, certs.Spec{Hosts: localwebhook.CertificateHosts}, time.Now())
		if err != nil {
			return nil, fmt.Errorf("local webhook certificates in %s: %w", so.CertDir, err)
		}
		manifests := opts.WebhookManifests
		if manifests == nil {
			manifests = localwebhook.Manifests()
		}
		defs, err := localwebhook.Parse(manifests)
		if err != nil {
			return nil, err
		}
		parts.registrar = &localwebhook.Registrar{Definitions: defs, Port: so.Port, CABundle: bundle,
			ConversionPath: conversion.Path, ConvertedCRDs: conversion.CRDNames()}
	case icm == nil || ptr.Deref(icm.Enable, true):
		if icm == nil {
			icm = &configapi.InternalCertManagement{}
		}
		ns := ptr.Deref(cfg.Namespace, configapi.DefaultNamespace)
		service := ptr.Deref(icm.WebhookServiceName, configapi.DefaultWebhookServiceName)
		parts.rotator = &certs.Rotator{
			Secret:   types.NamespacedName{Namespace: ns, Name: ptr.Deref(icm.WebhookSecretName, configapi.DefaultWebhookSecretName)},
			CertDir:  so.CertDir,
			Spec:     certs.Spec{Hosts: []string{certs.ServiceHost(service, ns)}},
			Webhooks: certs.DefaultWebhookConfigurations(conversion.CRDNames()...),
		}
		ready := parts.rotator.Ready()
		wait = func(ctx context.Context) error {
			select {
			case <-ready:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	default:
		dir := so.CertDir
		wait = func(ctx context.Context) error { return certs.WaitForFiles(ctx, dir, time.Second) }
	}
	parts.server = &gatedServer{Server: webhook.NewServer(so), wait: wait}
	return parts, nil
}

// attach adds the certificate machinery to the manager, registers the
// webhooks of opts.Webhooks and makes readiness wait for them.
func (p *webhookParts) attach(mgr ctrl.Manager, opts Options) error {
	for i, setup := range opts.Webhooks {
		if err := setup(mgr); err != nil {
			return fmt.Errorf("setting up webhooks (Options.Webhooks[%d]): %w", i, err)
		}
	}
	// The API server converts LocalQueues, ClusterQueues, Cohorts,
	// Workloads and MultiKueueClusters between v1beta1 and v1beta2 here.
	// This also adds the server to the manager when no setup did.
	mgr.GetWebhookServer().Register(conversion.Path, conversion.Handler{})
	if err := mgr.AddReadyzCheck("webhooks", p.server.StartedChecker()); err != nil {
		return fmt.Errorf("adding webhook readiness check: %w", err)
	}
	if r := p.rotator; r != nil {
		r.Reader, r.Writer = mgr.GetAPIReader(), mgr.GetClient()
		r.Webhooks.Served = p.server.serves
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("adding cert rotator: %w", err)
		}
	}
	if r := p.registrar; r != nil {
		r.Reader, r.Writer = mgr.GetAPIReader(), mgr.GetClient()
		r.ServerStarted, r.Served = p.server.Server.StartedChecker(), p.server.serves
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("adding local webhook registrar: %w", err)
		}
		if err := mgr.AddReadyzCheck("local-webhooks", r.Check); err != nil {
			return fmt.Errorf("adding local webhook readiness check: %w", err)
		}
	}
	return nil
}

// gatedServer holds the webhook server back until its certificates are in
// place; the manager keeps starting meanwhile (controllers run, readiness
// reports the wait). As a webhook.Server it runs on every replica, leader
// or not.
type gatedServer struct {
	webhook.Server
	// wait returns once the certificates are in place; nil means they are.
	wait   func(context.Context) error
	passed atomic.Bool

	mu    sync.Mutex
	paths map[string]bool
}

// Register records the path (local mode registers only served webhooks,
// and the cert rotator removes the others from the bundle's
// configurations; a disabled integration's allow-all handler does not
// count) and registers the handler.
func (s *gatedServer) Register(path string, hook http.Handler) {
	s.mu.Lock()
	if s.paths == nil {
		s.paths = map[string]bool{}
	}
	_, noop := hook.(jobframework.NoopWebhook)
	s.paths[path] = !noop
	s.mu.Unlock()
	s.Server.Register(path, hook)
}

// serves reports whether a handler is registered at path.
func (s *gatedServer) serves(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paths[path]
}

// Start waits for the certificates, then serves.
func (s *gatedServer) Start(ctx context.Context) error {
	if s.wait != nil {
		if err := s.wait(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("waiting for webhook certificates: %w", err)
		}
	}
	s.passed.Store(true)
	ctrl.LoggerFrom(ctx).Info("Webhook certificates are in place; starting the webhook server")
	return s.Server.Start(ctx)
}

// StartedChecker fails while the server waits for certificates, then
// reports whether it accepts TLS connections.
func (s *gatedServer) StartedChecker() healthz.Checker {
	started := s.Server.StartedChecker()
	return func(req *http.Request) error {
		if s.wait != nil && !s.passed.Load() {
			return errors.New("waiting for webhook certificates")
		}
		return started(req)
	}
}

// tlsOptions applies the Configuration's tls block (validated by the
// loader) to the webhook and metrics servers.
func tlsOptions(o *configapi.TLSOptions) ([]func(*tls.Config), error) {
	if o == nil {
		return nil, nil
	}
	versions := map[string]uint16{"VersionTLS10": tls.VersionTLS10, "VersionTLS11": tls.VersionTLS11,
		"VersionTLS12": tls.VersionTLS12, "VersionTLS13": tls.VersionTLS13}
	var minVersion uint16
	if o.MinVersion != "" {
		v, ok := versions[o.MinVersion]
		if !ok {
			return nil, fmt.Errorf("tls.minVersion: unknown version %q", o.MinVersion)
		}
		minVersion = v
	}
	suiteIDs := map[string]uint16{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		suiteIDs[cs.Name] = cs.ID
	}
	var suites []uint16
	for _, name := range o.CipherSuites {
		id, ok := suiteIDs[name]
		if !ok {
			return nil, fmt.Errorf("tls.cipherSuites: unknown cipher suite %q", name)
		}
		suites = append(suites, id)
	}
	var curves []tls.CurveID
	for _, c := range o.CurvePreferences {
		curves = append(curves, tls.CurveID(c))
	}
	return []func(*tls.Config){func(c *tls.Config) {
		if minVersion != 0 {
			c.MinVersion = minVersion
		}
		if len(suites) > 0 {
			c.CipherSuites = suites
		}
		if len(curves) > 0 {
			c.CurvePreferences = curves
		}
	}}, nil
}
