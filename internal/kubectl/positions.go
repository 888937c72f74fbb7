package kubectl

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	visibility "github.com/kuota-dev/kuota/api/visibility/v1beta2"
)

// Positions of pending workloads, read from the visibility API
// (visibility.kueue.x-k8s.io/v1beta2) that list workload shows in its
// POSITION IN QUEUE column, as kueuectl does.

// visibilityPath is where the pending workloads of a ClusterQueue are served.
const visibilityPath = "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues"

// queuePositions maps "namespace/name" of pending workloads to their
// position in their LocalQueue.
type queuePositions map[string]int32

// fetchPositions asks the visibility API for the pending workloads of each
// ClusterQueue. A ClusterQueue the API does not know, or an API that is not
// served (404, 503), gives no positions rather than an error: the column is
// then left empty.
func fetchPositions(ctx context.Context, rc rest.Interface, clusterQueues []string) (queuePositions, error) {
	out := queuePositions{}
	for _, cq := range clusterQueues {
		raw, err := rc.Get().AbsPath(visibilityPath, cq, "pendingworkloads").DoRaw(ctx)
		if apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the pending workloads of ClusterQueue %s: %w", cq, err)
		}
		var sum visibility.PendingWorkloadsSummary
		if err := json.Unmarshal(raw, &sum); err != nil {
			return nil, fmt.Errorf("decoding the pending workloads of ClusterQueue %s: %w", cq, err)
		}
		for _, it := range sum.Items {
			out[it.Namespace+"/"+it.Name] = it.PositionInLocalQueue
		}
	}
	return out, nil
}

// cell is the column's text for a workload: its position, or empty.
func (p queuePositions) cell(namespace, name string) string {
	if pos, ok := p[namespace+"/"+name]; ok {
		return fmt.Sprint(pos)
	}
	return ""
}
