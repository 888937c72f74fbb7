package scheduling

import (
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/workload"
)

// assignReplacement evaluates a growing elastic workload (w.Replaces): its
// Shape holds the pods it adds, and they must go on the flavors the slice it
// replaces holds (the job's running pods stay where they are).
func (c *cycle) assignReplacement(cur *cursor, w *workload.Info) flavors.Assignment {
	counts := make([]int32, len(w.Shape.PodSets))
	for i := range w.Shape.PodSets {
		counts[i] = w.Shape.PodSets[i].Count
	}
	hint := &workload.Hint{Counts: counts, Flavors: w.Replaces.Flavors}
	asg, ok := c.assigner.AssignHinted(cur.cq, cur.node, w.Shape, hint)
	if !ok {
		// The replaced slice's flavors do not name every PodSet: the
		// added pods could not join the running ones.
		return flavors.Assignment{Mode: flavors.NoFit, Reason: flavors.NoMatchingFlavor}
	}
	return asg
}

// WholeAssignment is the admission of a growing elastic workload at its
// whole size, from the assignment of the pods it adds: the same flavors,
// the workload's counts (w.Replaces.Counts) and their requests. Any other
// workload's assignment is returned as it is.
func WholeAssignment(w *workload.Info, asg *flavors.Assignment) *flavors.Assignment {
	if w.Replaces == nil || len(w.Replaces.Counts) != len(asg.PodSets) || len(w.Shape.PodSets) != len(asg.PodSets) {
		return asg
	}
	out := *asg
	out.PodSets = make([]flavors.PodSetAssignment, len(asg.PodSets))
	out.Usage = resources.FlavorResourceQuantities{}
	for i, ps := range asg.PodSets {
		ps.Count = w.Replaces.Counts[i]
		ps.Requests = w.Shape.PodSets[i].Requests(ps.Count)
		for r, f := range ps.Flavors {
			fr := resources.FlavorResource{Flavor: f, Resource: r}
			out.Usage[fr] = resources.Add(out.Usage[fr], ps.Requests[r])
		}
		out.PodSets[i] = ps
	}
	return &out
}
