// Package kubeflowjobs tests the Kubeflow integrations (the five Kubeflow
// Trainer v1 kinds and the MPI Operator's MPIJob) against a real
// kube-apiserver and etcd, with the CRDs of the modules Kuota builds with
// (github.com/kubeflow/training-operator's manifests/base/crds, without its
// v1 MPIJob, and github.com/kubeflow/mpi-operator's v2beta1 MPIJob, both
// from the module cache), and the manager in the test process. Neither
// operator runs here: the tests play them as a user would see them,
// writing job status (the Running condition and active pods once a job is
// resumed, no active pods once it is suspended, then Succeeded).
package kubeflowjobs

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "github.com/kubeflow/training-operator", Paths: []string{
		// Not its v1 MPIJob: the MPI Operator's v2beta1 has the same name.
		"manifests/base/crds/kubeflow.org_pytorchjobs.yaml", "manifests/base/crds/kubeflow.org_tfjobs.yaml",
		"manifests/base/crds/kubeflow.org_xgboostjobs.yaml", "manifests/base/crds/kubeflow.org_paddlejobs.yaml",
		"manifests/base/crds/kubeflow.org_jaxjobs.yaml"}},
		framework.ModuleCRDs{Module: "github.com/kubeflow/mpi-operator", Paths: []string{"manifests/base/kubeflow.org_mpijobs.yaml"}}))
}
