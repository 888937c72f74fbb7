// Package crash tests crash safety: the manager runs as a separate process
// and is killed with SIGKILL at random moments while workloads flow; after
// each restart it must rebuild its state from the API server without
// admitting anything twice or losing quota.
package crash

import (
	"os"
	"testing"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, &env))
}
