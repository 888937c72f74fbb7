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
	crds, err := kubeflowCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeflow:", err)
		os.Exit(1)
	}
	os.Exit(framework.RunMainWithCRDs(m, &env, crds...))
}

// kubeflowCRDs lists the CRD files: the training operator's v1 kinds but
// its v1 MPIJob (same name as the MPI Operator's), and the MPI Operator's
// v2beta1 MPIJob.
func kubeflowCRDs() ([]string, error) {
	training, err := paths.ModuleDir("github.com/kubeflow/training-operator")
	if err != nil {
		return nil, err
	}
	mpiOperator, err := paths.ModuleDir("github.com/kubeflow/mpi-operator")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kind := range []string{"pytorchjobs", "tfjobs", "xgboostjobs", "paddlejobs", "jaxjobs"} {
		out = append(out, filepath.Join(training, "manifests", "base", "crds", "kubeflow.org_"+kind+".yaml"))
	}
	out = append(out, filepath.Join(mpiOperator, "manifests", "base", "kubeflow.org_mpijobs.yaml"))
	for _, f := range out {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("CRD file: %w", err)
		}
	}
	return out, nil
}
