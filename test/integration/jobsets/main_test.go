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
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "sigs.k8s.io/jobset", Paths: []string{"config/components/crd/bases"}}))
}
