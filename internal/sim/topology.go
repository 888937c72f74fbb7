package sim

import (
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/feed"
)

// loadTopology puts a setup's Topologies and nodes into the cache, as the
// manager's feed does (feed.NodeOf reads the nodes the same way), and
// then marks them listed: topology-aware flavors get their capacity
// before the first cycle. A simulated scenario has no pods but the
// admitted workloads'; a live state's other pods take their nodes'
// capacity as in the manager. A
// setup with neither Topologies nor nodes (a live state read without
// them) leaves the topology-aware flavors unlisted, without capacity.
func loadTopology(c *cache.Cache, s *Setup) {
	if len(s.Topologies) == 0 && len(s.Nodes) == 0 {
		return
	}
	for _, t := range s.Topologies {
		levels := make([]string, len(t.Spec.Levels))
		for i, l := range t.Spec.Levels {
			levels[i] = l.NodeLabel
		}
		c.SetTopology(kueue.TopologyReference(t.Name), levels)
	}
	for _, n := range s.Nodes {
		c.SetNode(feed.NodeOf(n))
	}
	for _, p := range s.Pods {
		if p.Labels[feed.TASPodLabel] == "true" {
			continue // counted through its Workload's assignment
		}
		node, req := feed.PodUsage(p)
		c.SetPodUsage(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, node, req)
	}
	c.MarkTopologySynced()
}
