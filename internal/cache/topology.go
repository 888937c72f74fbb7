package cache

import (
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// The setters below feed topology-aware scheduling: Topologies, and the
// nodes and pods that give each TAS flavor's free capacity. What can make
// room (a new or changed node or Topology, a pod gone) sets parked
// workloads loose; a pod taking more room cannot.

// SetTopology records a Topology's levels.
func (c *Cache) SetTopology(name kueue.TopologyReference, levels []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetTopology(name, levels)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteTopology forgets a Topology.
func (c *Cache) DeleteTopology(name kueue.TopologyReference) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteTopology(name)
	c.notify()
}

// SetNode records a node.
func (c *Cache) SetNode(n *state.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetNode(n)
	c.queues.UnparkAll()
	c.notify()
}

// DeleteNode forgets a node.
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteNode(name)
	c.notify()
}

// SetPodUsage records what a pod placed without topology takes of its
// node; an empty node or no requests (a pod that ended) forgets it.
func (c *Cache) SetPodUsage(key types.NamespacedName, node string, requests resources.Requests) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetPodUsage(key, node, requests)
	if node == "" || len(requests) == 0 {
		c.queues.UnparkAll()
	}
	c.notify()
}

// DeletePodUsage forgets a pod.
func (c *Cache) DeletePodUsage(key types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeletePodUsage(key)
	c.queues.UnparkAll()
	c.notify()
}

// HasTopologyFlavors reports whether some ResourceFlavor names a Topology:
// until then the manager watches no nodes or pods for topology.
func (c *Cache) HasTopologyFlavors() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.HasTopologyFlavors()
}

// MarkTopologySynced records that the nodes and pods were listed: TAS
// flavors get capacity from then on (before, nothing is placed by
// topology, so that pods not yet seen cannot be overcommitted).
func (c *Cache) MarkTopologySynced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetTopologySynced()
	c.queues.UnparkAll()
	c.notify()
}
