// Package rayjobs tests the Ray integrations (RayJob, RayCluster and
// RayService) against a real kube-apiserver and etcd, with the CRDs of the
// KubeRay module Kuota builds with (github.com/ray-project/kuberay/
// ray-operator v1.6.0, config/crd/bases, from the module cache), and the
// manager in the test process. The Ray operator does not run here: the
// tests play it as a user would see it, writing status (a RayJob's
// jobDeploymentStatus and jobStatus, a cluster's state) and creating the
// RayCluster of a RayJob.
package rayjobs

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "github.com/ray-project/kuberay/ray-operator",
		Paths: []string{"config/crd/bases/ray.io_rayjobs.yaml", "config/crd/bases/ray.io_rayclusters.yaml", "config/crd/bases/ray.io_rayservices.yaml"}}))
}
