// Package lws tests the LeaderWorkerSet integration against a real
// kube-apiserver and etcd with the LeaderWorkerSet CRD of the
// sigs.k8s.io/lws module (from the module cache), the manager in the test
// process. The LeaderWorkerSet controller does not run here: the tests
// play it, creating each group's leader and worker pods as it would, passed
// through Kuota's pod webhook (no kube-scheduler either: admitted pods are
// checked ungated with the flavor's node selector).
package lws

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{Module: "sigs.k8s.io/lws", Paths: []string{"config/crd/bases"}}))
}
