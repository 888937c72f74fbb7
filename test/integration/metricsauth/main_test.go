// Package metricsauth tests that the manager's metrics endpoint is
// protected as Kueue's is: HTTPS, a bearer token checked by the API server
// (TokenReview) and the right to get /metrics (SubjectAccessReview), granted
// by the kueue-metrics-reader ClusterRole of the install bundle; and that
// pprof, when turned on without a host, listens on the loopback interface.
package metricsauth

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
	os.Exit(framework.RunMain(m, &env))
}
