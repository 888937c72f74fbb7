// Package sparkapps tests the SparkApplication integration against a real
// kube-apiserver and etcd, with the SparkApplication CRD of the Spark
// operator module Kuota builds with (github.com/kubeflow/spark-operator/v2
// v2.5.2, config/crd/bases, from the module cache), and the manager in the
// test process. The Spark operator does not run here: the tests play it
// as a user would see it, writing the application's state
// (status.applicationState.state and the executors' states).
package sparkapps

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "github.com/kubeflow/spark-operator/v2",
		Paths: []string{"config/crd/bases/sparkoperator.k8s.io_sparkapplications.yaml"}}))
}
