package cache

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
)

// ReplaceNodes moves the pods a workload's topology assignment places on
// the failed nodes to other nodes of its flavor's topology, on the capacity
// free now (the first PodSet placed there; a workload with pods of several
// PodSets there is replaced one PodSet per call). It returns the admission
// to write and assumes it, so that no other placement takes the same room
// meanwhile; if the write fails, Refresh undoes it. Without a replacement
// it says why: the workload is then evicted.
func (c *Cache) ReplaceNodes(key Key, nodes []string) (*kueue.Admission, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, holds := c.state.Admitted(key)
	r := c.records[key]
	if !holds || r == nil || r.obj.Status.Admission == nil {
		return nil, "the workload holds no quota"
	}
	failed := map[string]bool{}
	for _, n := range nodes {
		failed[n] = true
	}
	adm := r.obj.Status.Admission.DeepCopy()
	for i := range adm.PodSetAssignments {
		psa := &adm.PodSetAssignments[i]
		if len(psa.Flavors) == 0 || !slices.ContainsFunc(c.state.AssignedNodes(psa.TopologyAssignment), func(n string) bool { return failed[n] }) {
			continue
		}
		flavor := lifecycle.TopologyFlavor(psa)
		tree := c.state.TopologyTree(flavor)
		if tree == nil {
			return nil, fmt.Sprintf("the topology of flavor %s is not known", flavor)
		}
		within, layers := topologyOf(r.obj, psa.Name)
		moved, why := tree.Replace(psa.TopologyAssignment, lifecycle.PerPod(psa), c.state.FailedNodes(nodes), within, layers)
		if moved == nil {
			return nil, fmt.Sprintf("PodSet %s: %s", psa.Name, why)
		}
		psa.TopologyAssignment = moved
		cp := *a
		cp.Topology = lifecycle.TopologyUses(adm)
		_ = c.state.Replace(&cp)
		c.notify()
		return adm, ""
	}
	return nil, "no PodSet of the workload is placed on those nodes"
}

// Refresh places a workload again from the latest object the informer
// showed: it undoes what ReplaceNodes assumed once the write failed.
func (c *Cache) Refresh(key Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.records[key]; ok {
		c.placeLocked(r.obj)
	}
}

// topologyOf is what a replacement keeps of a PodSet's topology request:
// the level its pods must share ("" when none) and its slice layers.
func topologyOf(wl *kueue.Workload, name kueue.PodSetReference) (string, []tas.Slice) {
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		if ps.Name != name || ps.TopologyRequest == nil {
			continue
		}
		return ptr.Deref(ps.TopologyRequest.Required, ""), tas.SlicesOf(ps.TopologyRequest)
	}
	return "", nil
}

// sameTopology compares the topology capacity two records of one workload
// take.
func sameTopology(a, b *state.Admitted) bool {
	if len(a.Topology) != len(b.Topology) {
		return false
	}
	for i := range a.Topology {
		x, y := &a.Topology[i], &b.Topology[i]
		if x.Flavor != y.Flavor || !equality.Semantic.DeepEqual(x.Assignment, y.Assignment) {
			return false
		}
	}
	return true
}
