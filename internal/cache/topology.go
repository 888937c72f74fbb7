package cache

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
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

// SetNode records a node. A node whose NoExecute taints or readiness
// changed brings the workloads placed on it back to the workload
// controller, which replaces the node or evicts them if it failed.
func (c *Cache) SetNode(n *state.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, known, _ := c.state.Node(n.Name)
	c.state.SetNode(n)
	if known && (old.Ready != n.Ready || !slices.Equal(noExecute(old.Taints), noExecute(n.Taints))) {
		c.revisitNodeHoldersLocked(n.Name)
	}
	c.queues.UnparkAll()
	c.notify()
}

// DeleteNode forgets a node; the workloads placed on it are looked at
// again (their pods there are gone).
func (c *Cache) DeleteNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.DeleteNode(name)
	c.revisitNodeHoldersLocked(name)
	c.notify()
}

// revisitTopologyHoldersLocked brings every workload placed by topology
// back to the workload controller. Its node checks wait until the nodes
// and the pods placed on them are listed (nodeChecksLocked), and a listing
// reports no change: a node that failed while no manager ran (deleted,
// not ready past its pods' toleration) would otherwise go unnoticed by a
// workload reconciled before the listing, until something else about it
// changed.
func (c *Cache) revisitTopologyHoldersLocked() {
	for _, key := range c.state.TopologyHolders() {
		c.revisits.add(key)
	}
}

func (c *Cache) revisitNodeHoldersLocked(node string) {
	for _, key := range c.state.NodeHolders(node) {
		c.revisits.add(key)
	}
}

func noExecute(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			t.TimeAdded = nil
			out = append(out, t)
		}
	}
	return out
}

// nodeChecksLocked gathers, for an admitted workload placed by topology,
// the nodes its pods are on and the tolerations they carry there (their
// PodSets' and flavors'); nil until the nodes were listed, and for a
// workload MultiKueue runs in a worker.
func (c *Cache) nodeChecksLocked(wl *kueue.Workload) map[string]lifecycle.NodeCheck {
	if wl.Status.Admission == nil || wl.Status.ClusterName != nil {
		return nil // no placement, or MultiKueue's: the nodes are the worker's
	}
	assigned := lifecycle.AssignedNodes(wl.Status.Admission, c.state.AssignedNodes)
	if len(assigned) == 0 {
		return nil
	}
	out := make(map[string]lifecycle.NodeCheck, len(assigned))
	for name, podSets := range assigned {
		n, found, synced := c.state.Node(name)
		if !synced {
			return nil
		}
		nc := lifecycle.NodeCheck{Pods: c.boundPodsOnLocked(lifecycle.KeyOf(wl), name)}
		if found {
			nc.Node = n
		}
		for _, ps := range podSets {
			nc.Tolerations = append(nc.Tolerations, c.tolerationsLocked(wl, ps)...)
		}
		out[name] = nc
	}
	return out
}

// tolerationsLocked returns the tolerations a PodSet's pods carry: the
// template's and those of the flavors it was admitted with.
func (c *Cache) tolerationsLocked(wl *kueue.Workload, ps kueue.PodSetReference) []corev1.Toleration {
	var out []corev1.Toleration
	for i := range wl.Spec.PodSets {
		if wl.Spec.PodSets[i].Name == ps {
			out = append(out, wl.Spec.PodSets[i].Template.Spec.Tolerations...)
		}
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if psa.Name != ps {
			continue
		}
		for _, fl := range psa.Flavors {
			if f, ok := c.state.Flavor(fl); ok {
				out = append(out, f.Tolerations...)
			}
		}
	}
	return out
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
// topology, so that pods not yet seen cannot be overcommitted), and the
// workloads placed by topology are looked at again.
func (c *Cache) MarkTopologySynced() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state.SetTopologySynced()
	c.revisitTopologyHoldersLocked()
	c.queues.UnparkAll()
	c.notify()
}
