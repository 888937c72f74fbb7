package scheduling

import (
	"fmt"
	"slices"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
	"github.com/kuota-dev/kuota/internal/workload"
)

// TopologyPlacementFailed: the quota fits, but the pods of some PodSet fit
// in no set of topology domains the request allows.
const TopologyPlacementFailed Reason = "TopologyPlacementFailed"

// placeTopology places, for an assignment that fits by quota, every PodSet
// assigned a TAS flavor in that flavor's topology, on the cycle's working
// trees (what earlier admissions of the cycle took is gone from them). A
// PodSet without a topology request on a TAS flavor is placed anywhere its
// pods fit. On success the assignment carries the placements (in a copy
// of its PodSets) and the trees lose their capacity, for the admission
// that follows; otherwise the message says which PodSet did not fit and
// why. (A failure after an earlier PodSet of the same workload was placed
// leaves that PodSet's pods in the cycle's tree: later workloads of the
// cycle see less capacity than there is, never more.)
func (c *cycle) placeTopology(w *workload.Info, asg *flavors.Assignment) (string, bool) {
	if len(c.snap.Topologies) == 0 && len(c.snap.TopologyErrors) == 0 {
		return "", true
	}
	podSets, msg, ok := c.placeOn(w, asg.PodSets, c.workTree)
	if !ok {
		return msg, false
	}
	for i := range podSets {
		if ta := podSets[i].Topology; ta != nil {
			flavor, _ := topologyFlavor(c, &podSets[i])
			c.placed = append(c.placed, placedUse{flavor: flavor, assignment: ta, perPod: shapeOf(w.Shape, podSets[i].Name).PerPod})
		}
	}
	asg.PodSets = podSets
	return "", true
}

// placeTopologyOf is placeTopology, except for the PodSets whose
// placement waits, which are marked delayed and count quota only: all TAS
// PodSets of a ClusterQueue that defers topology (MultiKueue: the worker
// cluster that runs the workload places its pods), and those on a flavor a
// ProvisioningRequest check applies to (placed once the nodes are
// provisioned, by PlaceDelayed).
func (c *cycle) placeTopologyOf(cq *state.ClusterQueue, w *workload.Info, asg *flavors.Assignment) (string, bool) {
	defers := c.snap.DefersTopology(cq)
	cloned := false
	for i := range asg.PodSets {
		f, ok := topologyFlavor(c, &asg.PodSets[i])
		if !ok || !(defers || c.snap.ProvisionsTopology(cq, f)) {
			continue
		}
		if !cloned {
			asg.PodSets, cloned = slices.Clone(asg.PodSets), true
		}
		asg.PodSets[i].DelayedTopology = true
	}
	if defers {
		return "", true
	}
	return c.placeTopology(w, asg)
}

// placedUse is a placement made earlier in the cycle.
type placedUse struct {
	flavor     kueue.ResourceFlavorReference
	assignment *kueue.TopologyAssignment
	perPod     resources.Requests
}

// placeOn places the TAS PodSets of podSets on the trees treeOf gives, one
// after the other, each taking its pods from its tree. It returns the
// PodSets with their placements (a copy when any was placed), or the
// message of the first that does not fit.
func (c *cycle) placeOn(w *workload.Info, podSets []flavors.PodSetAssignment,
	treeOf func(kueue.ResourceFlavorReference) *tas.Tree) ([]flavors.PodSetAssignment, string, bool) {
	cloned := false
	grouped := map[int]bool{}
	for i := range podSets {
		ps := &podSets[i]
		flavor, ok := topologyFlavor(c, ps)
		if !ok || grouped[i] || ps.DelayedTopology {
			continue
		}
		if msg, bad := c.snap.TopologyErrors[flavor]; bad {
			return nil, fmt.Sprintf("pod set %s: flavor %s: %s", ps.Name, flavor, msg), false
		}
		shape := shapeOf(w.Shape, ps.Name)
		if shape == nil {
			continue
		}
		tree := treeOf(flavor)
		if j := groupPartner(c, w, podSets, i, flavor); j >= 0 {
			if !cloned {
				podSets, cloned = slices.Clone(podSets), true
			}
			if msg, ok := c.placePair(w, podSets, i, j, tree); !ok {
				return nil, fmt.Sprintf("pod sets %s and %s (one group): flavor %s: %s", podSets[i].Name, podSets[j].Name, flavor, msg), false
			}
			grouped[j] = true
			continue
		}
		req := topologyRequest(shape, ps.Count)
		placeOn := c.allowedNodes(tree, flavor, shape)
		ta, why := placeOn.Place(req)
		if ta == nil {
			return nil, fmt.Sprintf("pod set %s: flavor %s: %s", ps.Name, flavor, why), false
		}
		if !cloned {
			podSets, cloned = slices.Clone(podSets), true
			ps = &podSets[i]
		}
		ps.Topology = ta
		// Later PodSets (and workloads) see these pods.
		tree.Use(ta, shape.PerPod)
	}
	return podSets, "", true
}

// allowedNodes returns tree, masked to the nodes the PodSets may run on
// when some are excluded: by the PodSets' own node selectors and required
// affinities, and by taints of the flavor's nodes that the flavor does
// not tolerate and the PodSets do not either.
func (c *cycle) allowedNodes(tree *tas.Tree, flavor kueue.ResourceFlavorReference, shapes ...*workload.PodSetShape) *tas.Tree {
	tainted := c.snap.NodeTaints[flavor]
	if len(tainted) == 0 && !slices.ContainsFunc(shapes, flavors.NarrowsNodes) {
		return tree
	}
	return tree.Masked(func(node string) bool {
		labels, taints := c.snap.NodeLabels[node], tainted[node]
		for _, s := range shapes {
			if !flavors.NodeMatches(s, labels) || !state.Tolerated(taints, s.Tolerations) {
				return false
			}
		}
		return true
	})
}

// placePair places the two PodSets i and j of a group together on tree
// (podSets is the caller's copy), the smaller one first.
func (c *cycle) placePair(w *workload.Info, podSets []flavors.PodSetAssignment, i, j int, tree *tas.Tree) (string, bool) {
	if podSets[j].Count < podSets[i].Count {
		i, j = j, i
	}
	a, b := shapeOf(w.Shape, podSets[i].Name), shapeOf(w.Shape, podSets[j].Name)
	if a == nil || b == nil {
		return "pod set not found", false
	}
	flavor, _ := topologyFlavor(c, &podSets[i])
	taA, taB, why := placeGroup(c.allowedNodes(tree, flavor, a, b), a, b, podSets[i].Count, podSets[j].Count)
	if taA == nil {
		return why, false
	}
	podSets[i].Topology, podSets[j].Topology = taA, taB
	tree.Use(taA, a.PerPod)
	tree.Use(taB, b.PerPod)
	return "", true
}

// topologyFlavor returns the TAS flavor a PodSet was assigned, if any.
func topologyFlavor(c *cycle, ps *flavors.PodSetAssignment) (kueue.ResourceFlavorReference, bool) {
	for _, f := range ps.Flavors {
		if _, ok := c.snap.Topologies[f]; ok {
			return f, true
		}
		if _, ok := c.snap.TopologyErrors[f]; ok {
			return f, true
		}
	}
	return "", false
}

// workTree returns the cycle's copy of a flavor's tree, cloned at first use.
func (c *cycle) workTree(flavor kueue.ResourceFlavorReference) *tas.Tree {
	if t, ok := c.topologies[flavor]; ok {
		return t
	}
	if c.topologies == nil {
		c.topologies = map[kueue.ResourceFlavorReference]*tas.Tree{}
	}
	t := c.snap.Topologies[flavor].Clone()
	c.topologies[flavor] = t
	return t
}

func shapeOf(s *workload.Shape, name kueue.PodSetReference) *workload.PodSetShape {
	for i := range s.PodSets {
		if s.PodSets[i].Name == name {
			return &s.PodSets[i]
		}
	}
	return nil
}

// topologyRequest converts a PodSet's request; without one (a TAS flavor
// used by a PodSet that asked for nothing) the pods go anywhere they fit.
func topologyRequest(shape *workload.PodSetShape, count int32) tas.Request {
	req := tas.Request{Count: count, PerPod: shape.PerPod}
	t := shape.Topology
	if t == nil {
		return req
	}
	if t.Required != nil {
		req.Required = *t.Required
	}
	if t.Preferred != nil {
		req.Preferred = *t.Preferred
	}
	req.Slices = tas.SlicesOf(t)
	return req
}
