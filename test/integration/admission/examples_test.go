package admission

import (
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// webhookKinds are the kinds Kuota's webhooks admit.
var webhookKinds = map[string]bool{"ResourceFlavor": true, "ClusterQueue": true, "Cohort": true, "Workload": true}

// kueueExamples returns every object of the webhooks' kinds in Kueue's
// example manifests.
func kueueExamples(t *testing.T) []testutil.Example {
	return testutil.KueueExamples(t, kueue.GroupVersion.Group, func(kind string) bool { return webhookKinds[kind] })
}
