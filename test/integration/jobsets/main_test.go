// Package jobsets tests the JobSet integration against a real
// kube-apiserver and etcd with the JobSet CRD of the sigs.k8s.io/jobset
// module (from the module cache), the manager in the test process with its
// webhooks registered with the API server (local mode). The JobSet
// controller does not run here: the tests play it, writing the JobSet
// status it would write (the end-to-end test runs the real one).
package jobsets

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	// Logs are noise unless KUOTA_TEST_LOG is set (0 info, 1 and up more).
	if lvl := os.Getenv("KUOTA_TEST_LOG"); lvl != "" {
		n, _ := strconv.Atoi(lvl)
		ctrllog.SetLogger(funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) },
			funcr.Options{Verbosity: n, LogTimestamp: true}))
	} else {
		ctrllog.SetLogger(logr.Discard())
	}
	crds, err := jobSetCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobset:", err)
		os.Exit(1)
	}
	os.Exit(framework.RunMainWithCRDs(m, &env, crds))
}

// jobSetCRDs is the CRD folder of the sigs.k8s.io/jobset module Kuota
// builds with.
func jobSetCRDs() (string, error) {
	dir, err := paths.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "config", "components", "crd", "bases"), nil
}
