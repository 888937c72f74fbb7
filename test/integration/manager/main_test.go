// Package manager holds integration tests of the Kuota manager: a real
// kube-apiserver and etcd, the manager running in the test process, and
// Workloads created directly, as Kueue's scalability test creates them.
package manager

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	// The managers' logs are noise unless KUOTA_TEST_LOG is set (to a
	// level: 0 info, 1 and up more detail).
	if lvl := os.Getenv("KUOTA_TEST_LOG"); lvl != "" {
		n, _ := strconv.Atoi(lvl)
		ctrllog.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) },
			funcr.Options{Verbosity: n, LogTimestamp: true}))
	} else {
		ctrllog.SetLogger(logr.Discard())
	}
	os.Exit(framework.RunMain(m, &env))
}
