package scheduling

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// PlaceDelayed is the second pass of a workload whose topology placement
// waited for a ProvisioningRequest check (ClusterQueue flavors the check
// applies to, see state.Snapshot.ProvisionsTopology): its quota is
// reserved and its checks are Ready, and the PodSets marked
// delayedTopologyRequest Pending are placed now, on the nodes of their
// flavors as the snapshot has them (the provisioned nodes among them),
// with the rules of the first pass (the PodSets' node selectors,
// affinities and tolerations, their groups). updates are the Ready checks'
// podSetUpdates: their node selectors and tolerations narrow the nodes as
// they will narrow the pods'. It returns the admission with the
// assignments written and the requests marked Ready, or why the pods do
// not fit (yet).
func PlaceDelayed(snap *state.Snapshot, w *workload.Info, adm *kueue.Admission, updates []kueue.PodSetUpdate) (*kueue.Admission, string) {
	c := &cycle{snap: snap}
	w = withUpdates(w, updates)
	var podSets []flavors.PodSetAssignment
	var at []int
	for i := range adm.PodSetAssignments {
		psa := &adm.PodSetAssignments[i]
		if psa.TopologyAssignment != nil || ptr.Deref(psa.DelayedTopologyRequest, "") != kueue.DelayedTopologyRequestStatePending {
			continue
		}
		shape := shapeOf(w.Shape, psa.Name)
		if shape == nil {
			return nil, fmt.Sprintf("pod set %s is not in the workload", psa.Name)
		}
		podSets = append(podSets, flavors.PodSetAssignment{Name: psa.Name, Count: ptr.Deref(psa.Count, shape.Count), Flavors: psa.Flavors})
		at = append(at, i)
	}
	if len(podSets) == 0 {
		return nil, "no pod set waits for its topology assignment"
	}
	placed, msg, ok := c.placeOn(w, podSets, c.workTree)
	if !ok {
		return nil, msg
	}
	out := adm.DeepCopy()
	for k, i := range at {
		if placed[k].Topology == nil {
			return nil, fmt.Sprintf("pod set %s: its flavor has no topology", placed[k].Name)
		}
		out.PodSetAssignments[i].TopologyAssignment = placed[k].Topology
		out.PodSetAssignments[i].DelayedTopologyRequest = ptr.To(kueue.DelayedTopologyRequestStateReady)
	}
	return out, ""
}

// withUpdates returns the workload with the checks' node selectors and
// tolerations added to its PodSets (a copy when there are any).
func withUpdates(w *workload.Info, updates []kueue.PodSetUpdate) *workload.Info {
	if len(updates) == 0 {
		return w
	}
	podSets := slices.Clone(w.Shape.PodSets)
	for i := range podSets {
		ps := &podSets[i]
		for _, u := range updates {
			if u.Name != ps.Name {
				continue
			}
			if len(u.NodeSelector) > 0 {
				sel := maps.Clone(ps.NodeSelector)
				if sel == nil {
					sel = map[string]string{}
				}
				maps.Copy(sel, u.NodeSelector)
				ps.NodeSelector = sel
			}
			if len(u.Tolerations) > 0 {
				ps.Tolerations = append(slices.Clone(ps.Tolerations), u.Tolerations...)
			}
		}
	}
	cp := *w
	cp.Shape = workload.NewShape(podSets)
	return &cp
}
