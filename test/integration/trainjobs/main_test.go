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
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "github.com/kubeflow/trainer/v2", Paths: []string{"manifests/base/crds"}}))
}
