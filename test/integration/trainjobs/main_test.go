// Package trainjobs tests the Kubeflow Trainer v2 TrainJob integration
// against a real kube-apiserver and etcd with the trainer's CRDs
// (TrainJob, TrainingRuntime, ClusterTrainingRuntime) taken from the
// github.com/kubeflow/trainer/v2 module Kuota builds against (module
// cache), and the manager in the test process. The trainer's controller
// does not run here: the tests play it, writing TrainJob status
// (jobsStatus and the Complete/Failed conditions). TrainJobs are
// unstructured objects, as in Kuota itself.
package trainjobs

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

var env *framework.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	crds, err := trainerCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trainjob:", err)
		os.Exit(1)
	}
	os.Exit(framework.RunMainWithCRDs(m, &env, crds))
}

// trainerCRDs is the CRD folder of the trainer module Kuota builds with.
func trainerCRDs() (string, error) {
	dir, err := paths.ModuleDir("github.com/kubeflow/trainer/v2")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "manifests", "base", "crds"), nil
}
