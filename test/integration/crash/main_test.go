// Package crash tests crash safety: manager replicas run as separate
// processes under one lease and are killed with SIGKILL at random moments
// while workloads flow, and kube-apiserver and etcd restart mid-run; each
// restarted manager must rebuild its state from the API server without
// admitting anything twice or losing quota.
package crash

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

// controlPlaneLog keeps what etcd and kube-apiserver print, for failures.
var controlPlaneLog = filepath.Join(os.TempDir(), "kuota-crash-controlplane.log")

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(m))
}

// run starts a control plane whose state survives restarts of its
// processes: etcd's data and the API server's certificates live in a
// folder of our own, removed at the end.
func run(m *testing.M) int {
	state, err := os.MkdirTemp("", "kuota-crash-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(state)
	out, err := os.Create(controlPlaneLog)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer out.Close()
	return framework.RunMainWith(m, &env, framework.Options{StateDir: state, Output: out})
}
