package flavors

import (
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// AssignPartial looks for the largest pod count, between the PodSet's
// minCount and its count, whose assignment accept takes (nil: one that fits
// now). Only one PodSet may allow partial admission; fewer pods never need
// more quota, so a binary search finds the largest count. It returns false
// when no count is accepted.
func (a *Assigner) AssignPartial(cq *state.ClusterQueue, node *hierarchy.Node, shape *workload.Shape, accept func(*Assignment) bool) (Assignment, bool) {
	if accept == nil {
		accept = func(asg *Assignment) bool { return asg.Mode == Fit }
	}
	idx := -1
	for i := range shape.PodSets {
		if ps := &shape.PodSets[i]; ps.MinCount > 0 && ps.MinCount < ps.Count {
			idx = i
			break
		}
	}
	if idx < 0 {
		return Assignment{}, false
	}
	counts := make([]int32, len(shape.PodSets))
	for i := range shape.PodSets {
		counts[i] = shape.PodSets[i].Count
	}
	lo, hi := shape.PodSets[idx].MinCount, shape.PodSets[idx].Count-1
	var best Assignment
	found := false
	for lo <= hi {
		mid := lo + (hi-lo)/2
		counts[idx] = mid
		asg := a.Assign(cq, node, shape, counts)
		if asg.Mode != NoFit && accept(&asg) {
			best, found = asg, true
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return best, found
}
