package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// The manager indexes and watches its own kinds from the start: built
// while their CRDs are not served yet (a manager started in the same
// moment as `kubectl apply` of the install bundle, or a test harness that
// installs the CRDs and starts the manager together), it would fail with
// "no matches for kind". WaitForAPI holds the start until they are served.

// requiredKinds are the kueue.x-k8s.io/v1beta2 kinds the manager watches
// from its start.
var requiredKinds = []string{"Workload", "ClusterQueue", "LocalQueue", "ResourceFlavor", "Cohort", "AdmissionCheck", "WorkloadPriorityClass"}

// DefaultAPIWait is how long the manager waits at start for its CRDs.
const DefaultAPIWait = time.Minute

// apiPoll is how often WaitForAPI asks discovery again.
var apiPoll = time.Second

// WaitForAPI returns once the API server serves every requiredKinds, or an
// error naming the missing kinds once timeout has passed (with timeout 0,
// after asking once). Failing discovery calls are retried within the
// timeout.
func WaitForAPI(ctx context.Context, disc discovery.DiscoveryInterface, timeout time.Duration) error {
	log := ctrl.Log.WithName("setup")
	deadline := time.Now().Add(timeout)
	logged := false
	for {
		missing, err := missingKinds(disc)
		if err == nil && len(missing) == 0 {
			if logged {
				log.Info("The kueue.x-k8s.io CRDs are served now")
			}
			return nil
		}
		if time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("asking the API server which kueue.x-k8s.io kinds it serves (for %s): %w", timeout, err)
			}
			return fmt.Errorf("the API server does not serve %s/%s %s (waited %s): install the CRDs first "+
				"(kubectl apply --server-side -f the install bundle, or config/crd/bases)",
				kueue.GroupVersion.Group, kueue.GroupVersion.Version, strings.Join(missing, ", "), timeout)
		}
		if !logged {
			logged = true
			if err != nil {
				log.Info("Waiting for the API server's discovery", "error", err.Error(), "timeout", timeout.String())
			} else {
				log.Info("Waiting for the kueue.x-k8s.io CRDs to be served", "missing", missing, "timeout", timeout.String())
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(apiPoll):
		}
	}
}

// missingKinds lists the requiredKinds the API server does not serve.
func missingKinds(disc discovery.DiscoveryInterface) ([]string, error) {
	served, err := jobframework.ServedKinds(disc, kueue.GroupVersion)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, k := range requiredKinds {
		if !served[k] {
			missing = append(missing, k)
		}
	}
	return missing, nil
}
