package scheduling

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/tas"
	"github.com/kuota-dev/kuota/internal/workload"
)

// PodSet groups (podSetGroupName, for instance a LeaderWorkerSet's leader
// and workers) are placed together: their pods go into the same domain of
// the requested level. The two are placed as one request of both counts,
// each pod asking for the larger of the two PodSets' requests (never less
// than either needs), and the leading pods of the result are given to the
// smaller PodSet. Groups with slices are placed one PodSet at a time.

// groupPartner returns the index of the other PodSet of the group of
// PodSet i assigned the same flavor, or -1.
func groupPartner(c *cycle, w *workload.Info, podSets []flavors.PodSetAssignment, i int, flavor kueue.ResourceFlavorReference) int {
	group := groupOf(shapeOf(w.Shape, podSets[i].Name))
	if group == "" {
		return -1
	}
	for j := range podSets {
		if j == i || groupOf(shapeOf(w.Shape, podSets[j].Name)) != group {
			continue
		}
		if f, ok := topologyFlavor(c, &podSets[j]); ok && f == flavor {
			return j
		}
		return -1
	}
	return -1
}

func groupOf(s *workload.PodSetShape) string {
	if s == nil || s.Topology == nil || s.Topology.PodSetGroupName == nil {
		return ""
	}
	t := s.Topology
	if t.PodSetSliceRequiredTopology != nil || len(t.PodsetSliceRequiredTopologyConstraints) > 0 {
		return ""
	}
	return *t.PodSetGroupName
}

// placeGroup places PodSets a (count ca) and b (count cb) of one group on
// tree; it returns their assignments or why they do not fit.
func placeGroup(tree *tas.Tree, a, b *workload.PodSetShape, ca, cb int32) (*kueue.TopologyAssignment, *kueue.TopologyAssignment, string) {
	req := topologyRequest(b, ca+cb)
	if b.Topology == nil || (b.Topology.Required == nil && b.Topology.Preferred == nil) {
		req = topologyRequest(a, ca+cb)
	}
	req.PerPod = a.PerPod.Clone()
	req.PerPod.Max(b.PerPod)
	ta, why := tree.Place(req)
	if ta == nil {
		return nil, nil, why
	}
	doms, err := tas.Domains(ta)
	if err != nil {
		return nil, nil, err.Error()
	}
	// a takes the first pods.
	first := ca
	var domsA, domsB []tas.Domain
	for _, d := range doms {
		take := min(first, d.Count)
		if take > 0 {
			domsA = append(domsA, tas.Domain{Values: d.Values, Count: take})
			first -= take
		}
		if rest := d.Count - take; rest > 0 {
			domsB = append(domsB, tas.Domain{Values: d.Values, Count: rest})
		}
	}
	return tas.Encode(ta.Levels, domsA), tas.Encode(ta.Levels, domsB), ""
}
