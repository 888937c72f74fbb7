// Package mkdispatch holds integration tests of MultiKueue: three real
// API servers (a manager cluster and two workers), Kuota's manager in
// the test process for the manager cluster and for a worker. There is no
// Job, JobSet or Ray controller, so the tests play their part in the
// worker. The JobSet, RayService and LeaderWorkerSet CRDs come from the
// module cache.
package mkdispatch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var manager, worker1, worker2 *framework.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := paths.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: "+err.Error())
		return 1
	}
	jobSetCRDs := filepath.Join(dir, "config", "components", "crd", "bases")
	rayDir, err := paths.ModuleDir("github.com/ray-project/kuberay/ray-operator")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: "+err.Error())
		return 1
	}
	rayServiceCRD := filepath.Join(rayDir, "config", "crd", "bases", "ray.io_rayservices.yaml")
	lwsDir, err := paths.ModuleDir("sigs.k8s.io/lws")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration: "+err.Error())
		return 1
	}
	lwsCRDs := filepath.Join(lwsDir, "config", "crd", "bases")
	for _, e := range []**framework.Env{&manager, &worker1, &worker2} {
		env, err := framework.StartWithCRDs(jobSetCRDs, rayServiceCRD, lwsCRDs)
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration: "+err.Error())
			return 1
		}
		*e = env
		defer func() {
			if err := env.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "integration: stopping control plane: "+err.Error())
			}
		}()
	}
	return m.Run()
}
