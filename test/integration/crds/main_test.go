// Package crds holds integration tests of Kuota's CRDs against a real
// kube-apiserver: Kueue's example manifests are accepted, defaults are
// applied, and invalid objects are rejected with errors naming the field.
package crds

import (
	"os"
	"testing"

	"github.com/kuota-dev/kuota/test/integration/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(framework.RunMain(m, &env))
}
