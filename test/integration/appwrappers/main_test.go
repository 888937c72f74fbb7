// Package appwrappers tests the AppWrapper integration against a real
// kube-apiserver and etcd with the AppWrapper CRD of the
// github.com/project-codeflare/appwrapper module (from the module cache),
// the manager in the test process with its webhooks registered with the
// API server (local mode). The AppWrapper operator is neither built nor
// run: the tests play it, writing the status it would write and creating
// the objects it would create.
package appwrappers

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "github.com/project-codeflare/appwrapper",
		Paths: []string{"config/crd/bases/workload.codeflare.dev_appwrappers.yaml"}}))
}
