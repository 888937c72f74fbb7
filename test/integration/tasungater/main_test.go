// Package tasungater tests the topology ungater against a real
// kube-apiserver and etcd: a manager in the test process runs only the
// ungater; the tests write the admitted Workload and its gated pods
// themselves, as the scheduler and a job controller would.
package tasungater

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(framework.RunMain(m, &env))
}
