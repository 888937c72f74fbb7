// Package pendingworkloads tests the pending-workloads API end to end: a real
// kube-apiserver with its aggregation layer on, a manager in the test
// process serving visibility.kueue.x-k8s.io and registered as an
// APIService (as local mode does), and requests that go through
// kube-apiserver, which authenticates the caller and forwards the request
// with front-proxy headers; the manager authorizes with
// SubjectAccessReviews.
package pendingworkloads

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/utils/ptr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var (
	env *framework.Env
	mgr *framework.Manager
)

func TestMain(m *testing.M) {
	if lvl := os.Getenv("KUOTA_TEST_LOG"); lvl != "" {
		n, _ := strconv.Atoi(lvl)
		ctrllog.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) },
			funcr.Options{Verbosity: n, LogTimestamp: true}))
	} else {
		ctrllog.SetLogger(logr.Discard())
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	e, err := framework.StartWith(framework.Options{Aggregation: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "visibility integration: "+err.Error())
		return 1
	}
	env = e
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "visibility integration: stopping control plane: "+err.Error())
		}
	}()
	cfg, err := framework.ManagerConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, "visibility integration: "+err.Error())
		return 1
	}
	mgr, err = env.StartManagerWith(cfg, func(o *app.Options) {
		o.Visibility, o.VisibilityPort, o.LocalVisibility = ptr.To(true), ptr.To(0), true
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "visibility integration: starting manager: "+err.Error())
		return 1
	}
	defer func() {
		if err := mgr.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "visibility integration: stopping manager: "+err.Error())
		}
	}()
	return m.Run()
}
