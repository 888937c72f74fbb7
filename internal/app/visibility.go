package app

import (
	"fmt"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/certs"
	"github.com/kuota-dev/kuota/internal/visibility"
)

// visibilityCertDir is where the serving certificate of the visibility
// server is read from when internal certificate management is off (as in
// Kueue: cert-manager mounts it there).
const visibilityCertDir = "/visibility"

// visibilityEnabled: the pending-workloads API is served unless the
// VisibilityOnDemand feature gate is off or Options.Visibility says no.
func visibilityEnabled(opts Options) bool {
	if on, set := opts.Config.FeatureGates["VisibilityOnDemand"]; set && !on {
		return false
	}
	return ptr.Deref(opts.Visibility, true)
}

// setupVisibility adds the visibility API server (and, in local mode, its
// APIService registration) to the manager.
func (m *Manager) setupVisibility(opts Options) error {
	cfg := opts.Config
	vs := cfg.VisibilityServer
	if vs == nil {
		vs = &configapi.VisibilityServerConfiguration{}
	}
	port := int(ptr.Deref(vs.BindPort, configapi.DefaultVisibilityBindPort))
	if opts.VisibilityPort != nil {
		port = *opts.VisibilityPort
	}
	ns := ptr.Deref(cfg.Namespace, configapi.DefaultNamespace)
	local := opts.LocalWebhooks || opts.LocalVisibility
	hostIP := visibility.HostAddress()
	certPEM, keyPEM, caBundle, err := visibilityCertificate(cfg, ns, hostIP, local)
	if err != nil {
		return err
	}
	so := visibility.Options{Source: m.Cache, RestConfig: opts.RestConfig, BindAddress: ptr.Deref(vs.BindAddress, ""), Port: port,
		CertPEM: certPEM, KeyPEM: keyPEM}
	if t := cfg.TLS; t != nil {
		so.MinTLSVersion, so.CipherSuites, so.CurvePreferences = t.MinVersion, t.CipherSuites, t.CurvePreferences
	}
	server, err := visibility.New(so)
	if err != nil {
		return err
	}
	m.Visibility = server
	if err := m.Add(server); err != nil {
		return fmt.Errorf("adding the visibility server: %w", err)
	}
	if local {
		r := &visibility.Registrar{Config: opts.RestConfig, Namespace: ns, HostIP: hostIP, Port: server.Port(), CABundle: caBundle}
		if err := m.Add(r); err != nil {
			return fmt.Errorf("adding the local visibility registration: %w", err)
		}
	}
	return nil
}

// visibilityCertificate returns the serving certificate: tls.crt and
// tls.key from /visibility when internal certificate management is off and
// they are there (cert-manager mounts them, as for Kueue), otherwise one
// issued at start by a CA of its own (the bundle's APIService skips
// verification, as Kueue's does; local mode registers the CA bundle).
func visibilityCertificate(cfg *configapi.Configuration, ns, hostIP string, local bool) (certPEM, keyPEM, caBundle []byte, err error) {
	if icm := cfg.InternalCertManagement; !local && icm != nil && !ptr.Deref(icm.Enable, true) {
		files, err := certs.ReadFiles(visibilityCertDir, certs.CertKey, certs.KeyKey)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("visibility server certificate: %w", err)
		}
		if len(files[certs.CertKey]) > 0 && len(files[certs.KeyKey]) > 0 {
			return files[certs.CertKey], files[certs.KeyKey], nil, nil
		}
		ctrl.Log.Info("No visibility certificate mounted; issuing one", "dir", visibilityCertDir)
	}
	now := time.Now()
	ca, err := certs.NewCA(now, 10*365*24*time.Hour)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("visibility server certificate: %w", err)
	}
	hosts := []string{certs.ServiceHost(visibility.ServiceName, ns), visibility.ServiceName + "." + ns, "localhost", "127.0.0.1"}
	if hostIP != "" {
		hosts = append(hosts, hostIP)
	}
	serving, err := certs.NewServing(ca, hosts, now, 10*365*24*time.Hour)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("visibility server certificate: %w", err)
	}
	ctrl.Log.V(1).Info("Issued the visibility server's certificate", "hosts", hosts)
	return serving.CertPEM, serving.KeyPEM, ca.CertPEM, nil
}
