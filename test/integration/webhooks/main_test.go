// Package webhooks holds integration tests of the manager's webhook server
// against a real kube-apiserver: local mode (the API server calls a webhook
// served by the test process on 127.0.0.1), internal certificate
// management (Secret, certDir, CA injection, serving certificate), and
// managers without webhooks staying free of all that.
package webhooks

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/utils/ptr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	// Logs are noise unless KUOTA_TEST_LOG is set (0 info, 1 and up more).
	if lvl := os.Getenv("KUOTA_TEST_LOG"); lvl != "" {
		n, _ := strconv.Atoi(lvl)
		ctrllog.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) },
			funcr.Options{Verbosity: n, LogTimestamp: true}))
	} else {
		ctrllog.SetLogger(logr.Discard())
	}
	os.Exit(framework.RunMain(m, &env))
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testConfig is a manager Configuration with its webhook server on a free
// port and its certificates in a temporary folder.
func testConfig(t *testing.T) *configapi.Configuration {
	t.Helper()
	cfg, err := framework.ManagerConfig(func(c *configapi.Configuration) {
		c.Webhook.Port = ptr.To(freePort(t))
		c.Webhook.CertDir = t.TempDir()
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startManager builds and starts a manager in the test process and stops it
// at the end of the test (or earlier through the returned func).
func startManager(t *testing.T, opts app.Options) func() {
	t.Helper()
	opts.RestConfig = env.Config
	opts.MetricsBindAddress = ptr.To("0")
	if opts.HealthBindAddress == nil {
		opts.HealthBindAddress = ptr.To("0")
	}
	opts.SecureMetrics = ptr.To(false)
	opts.SkipControllerNameValidation = true
	if opts.Visibility == nil {
		opts.Visibility = ptr.To(false)
	}
	m, err := app.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("manager returned %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("manager did not stop within 60s")
		}
	}
	t.Cleanup(stop)
	return stop
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testutil.Eventually(t, timeout, 100*time.Millisecond, what, cond)
}
