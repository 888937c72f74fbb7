// Package manager holds integration tests of the Kuota manager: a real
// kube-apiserver and etcd, the manager running in the test process, and
// Workloads created directly, as Kueue's scalability test creates them.
package manager

import (
	"os"
	"testing"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, &env))
}
