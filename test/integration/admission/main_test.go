// Package admission tests Kuota's admission webhooks through a real
// kube-apiserver: the webhook configurations are generated from the
// +kubebuilder:webhook markers with controller-gen, installed by envtest,
// and served by a controller-runtime manager that runs only the webhooks.
package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kuota-dev/kuota/internal/paths"
	kuotawebhook "github.com/kuota-dev/kuota/internal/webhook"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var (
	// k8s is a client of the test API server.
	k8s client.Client
	// restConfig is the test API server's configuration.
	restConfig *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhook integration: "+err.Error())
		return 1
	}
	defer stop()
	return m.Run()
}

// start generates the webhook configurations, starts the control plane
// with them installed and a manager serving the webhooks, and returns a
// function that stops both.
func start() (func(), error) {
	ctrl.SetLogger(logr.Discard())
	bin, err := paths.ToolsBin()
	if err != nil {
		return nil, err
	}
	root, err := paths.RepoRoot()
	if err != nil {
		return nil, err
	}
	manifests, err := os.MkdirTemp("", "kuota-webhooks-")
	if err != nil {
		return nil, err
	}
	if err := generateWebhookManifests(bin, root, manifests); err != nil {
		os.RemoveAll(manifests)
		return nil, err
	}
	scheme, err := framework.NewScheme()
	if err != nil {
		return nil, err
	}
	// KUBEBUILDER_ASSETS would override BinaryAssetsDirectory; keep them equal.
	if err := os.Setenv("KUBEBUILDER_ASSETS", bin); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		CRDDirectoryPaths:        []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: 60 * time.Second,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{Paths: []string{manifests}},
	}
	cfg, err := env.Start()
	if err != nil {
		os.RemoveAll(manifests)
		return nil, fmt.Errorf("starting envtest control plane: %w", err)
	}
	cancel, err := startManager(cfg, &env.WebhookInstallOptions)
	if err == nil {
		restConfig = cfg
		k8s, err = client.New(cfg, client.Options{Scheme: scheme})
	}
	stop := func() {
		if cancel != nil {
			cancel()
		}
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "webhook integration: stopping control plane: "+err.Error())
		}
		os.RemoveAll(manifests)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// generateWebhookManifests runs controller-gen on the markers of
// internal/webhook, as `make generate` does for config/webhook.
func generateWebhookManifests(bin, root, out string) error {
	gen := filepath.Join(bin, "controller-gen")
	if _, err := os.Stat(gen); err != nil {
		return fmt.Errorf("controller-gen is missing from %s: run 'make tools' first: %w", bin, err)
	}
	cmd := exec.Command(gen, "webhook", "paths=./internal/webhook/...", "output:webhook:artifacts:config="+out)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("generating webhook configurations: %w\n%s", err, output)
	}
	return nil
}

// startManager runs a manager with only Kuota's webhooks, serving where
// envtest pointed the webhook configurations, and waits until it answers.
func startManager(cfg *rest.Config, opts *envtest.WebhookInstallOptions) (context.CancelFunc, error) {
	scheme, err := framework.NewScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: ctrlwebhook.NewServer(ctrlwebhook.Options{
			Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	if err := kuotawebhook.Setup(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "webhook integration: manager: "+err.Error())
		}
	}()
	addr := net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))
	if err := waitForTLS(addr, 30*time.Second); err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

func waitForTLS(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only checks that the server is up
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("webhook server at %s did not come up", addr), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
