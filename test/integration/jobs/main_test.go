// Package jobs holds integration tests of the job integrations: a real
// kube-apiserver and etcd, the manager in the test process with its job
// reconcilers, and batch/v1 Jobs. There is no Job controller here, so the
// tests play its part by writing Job status.
package jobs

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.New(managerLog.sink())) // drops all until a test arms it
	os.Exit(framework.RunMain(m, &env))
}
