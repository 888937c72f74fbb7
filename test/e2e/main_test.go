// Package e2e runs Kuota end to end on a local cluster: kube-apiserver,
// etcd, kube-controller-manager (its Job controller creates pods),
// kube-scheduler and kwok (fake nodes whose pods run and complete), all
// started by internal/devcluster from the binaries `make tools` builds, and
// kuota-manager as a process on the host, serving its webhooks locally.
// Users' Jobs go through the real admission chain. The manager acts as the
// install bundle's ServiceAccount (identity_test.go): a refusal from the
// API server fails the run.
//
// Throughout the run a watcher checks that no pod of a managed Job exists
// before its Workload was admitted: every such pod must come from the
// admitted template (it carries the Workload's name) and that Workload
// must exist.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/paths"
)

var suite *harness

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	// The test's own clients log their errors only.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	bin, err := paths.ToolsBin()
	if err == nil {
		_, err = devcluster.LocateTools(bin)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: skipped, control-plane binaries not built (run `make tools`): %v\n", err)
		return 0
	}
	tmp, err := os.MkdirTemp("", "kuota-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	h, err := setUp(ctx, bin, tmp)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: setting up:", err)
		if h != nil {
			h.tearDown()
			h.dumpLog(os.Stderr)
		}
		return 1
	}
	suite = h
	code := m.Run()
	if v := h.pods.violations(); len(v) > 0 {
		fmt.Fprintln(os.Stderr, "e2e: pods of managed Jobs created before admission:")
		for _, s := range v {
			fmt.Fprintln(os.Stderr, "  "+s)
		}
		code = 1
	}
	if r := h.refusals(); len(r) > 0 {
		fmt.Fprintln(os.Stderr, "e2e: the API server refused the manager (running as the bundle's service account):")
		for _, s := range r {
			fmt.Fprintln(os.Stderr, "  "+s)
		}
		code = 1
	}
	if code != 0 {
		h.dumpLog(os.Stderr)
	}
	h.tearDown()
	return code
}

// logPath is where the manager's log goes (kept when a test fails).
func logPath(tmp string) string { return filepath.Join(tmp, "kuota-manager.log") }
