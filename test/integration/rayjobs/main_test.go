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
	crds, err := rayCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ray:", err)
		os.Exit(1)
	}
	os.Exit(framework.RunMainWithCRDs(m, &env, crds...))
}

// rayCRDs lists the KubeRay CRD files of the three kinds.
func rayCRDs() ([]string, error) {
	dir, err := paths.ModuleDir("github.com/ray-project/kuberay/ray-operator")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, kind := range []string{"rayjobs", "rayclusters", "rayservices"} {
		f := filepath.Join(dir, "config", "crd", "bases", "ray.io_"+kind+".yaml")
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("CRD file: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}
