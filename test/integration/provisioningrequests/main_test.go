// Package provisioningrequests tests the ProvisioningRequest admission check
// against a real kube-apiserver and etcd with cluster-autoscaler's
// ProvisioningRequest CRD (from the k8s.io/autoscaler/cluster-autoscaler/apis
// module in the module cache) and the manager in the test process. No
// autoscaler runs here: the tests play it, writing the request conditions
// it would write.
package provisioningrequests

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
	os.Exit(framework.RunMainWithModuleCRDs(m, &env, framework.ModuleCRDs{
		Module: "k8s.io/autoscaler/cluster-autoscaler/apis",
		Paths:  []string{"config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"},
	}))
}
