package flavors

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Options tune assignment.
type Options struct {
	// IgnoreUndeclared ignores requested resources that no resource group
	// covers, instead of refusing the workload (Kueue's IgnoreUndeclared
	// quota check strategy; the default is BlockUndeclared).
	IgnoreUndeclared bool
	// FairSharing is on: a borrowing workload may then reclaim quota from
	// queues with a larger share (reclaimWithinCohort).
	FairSharing bool
}

// Assigner assigns flavors against one (working) cohort tree. It caches
// flavor eligibility per shape, so reuse one Assigner for a whole cycle.
type Assigner struct {
	flavors map[kueue.ResourceFlavorReference]*state.Flavor
	opts    Options
	cache   map[eligibilityKey]eligibility
	// requests caches each PodSet's requests at a count; the maps are
	// shared by the assignments and never modified.
	requests map[requestsKey]resources.Requests
}

type requestsKey struct {
	shape  *workload.Shape
	podSet int
	count  int32
}

type eligibilityKey struct {
	shape  *workload.Shape
	podSet int
	flavor kueue.ResourceFlavorReference
}

type eligibility struct {
	ok     bool
	reason string
}

// NewAssigner returns an assigner over the given flavors.
func NewAssigner(flavors map[kueue.ResourceFlavorReference]*state.Flavor, opts Options) *Assigner {
	return &Assigner{flavors: flavors, opts: opts, cache: map[eligibilityKey]eligibility{}, requests: map[requestsKey]resources.Requests{}}
}

// Assign computes flavors for every PodSet of shape in cq, whose node in the
// working tree is node. counts, when not nil, overrides the pod counts.
func (a *Assigner) Assign(cq *state.ClusterQueue, node *hierarchy.Node, shape *workload.Shape, counts []int32) Assignment {
	return a.assign(cq, node, shape, counts, nil)
}

// AssignHinted evaluates only the hinted counts and flavors; it returns false
// when the hint does not match the shape.
func (a *Assigner) AssignHinted(cq *state.ClusterQueue, node *hierarchy.Node, shape *workload.Shape, hint *workload.Hint) (Assignment, bool) {
	if hint == nil || len(hint.Counts) != len(shape.PodSets) || len(hint.Flavors) != len(shape.PodSets) {
		return Assignment{}, false
	}
	return a.assign(cq, node, shape, hint.Counts, hint.Flavors), true
}

func (a *Assigner) assign(cq *state.ClusterQueue, node *hierarchy.Node, shape *workload.Shape, counts []int32,
	pins []map[corev1.ResourceName]kueue.ResourceFlavorReference) Assignment {
	out := Assignment{Mode: Fit, Usage: resources.FlavorResourceQuantities{}}
	for i := range shape.PodSets {
		ps := &shape.PodSets[i]
		count := ps.Count
		if counts != nil {
			count = counts[i]
		}
		var pin map[corev1.ResourceName]kueue.ResourceFlavorReference
		if pins != nil {
			pin = pins[i]
		}
		psa, reason, notes := a.assignPodSet(cq, node, shape, i, count, pin, &out)
		out.PodSets = append(out.PodSets, psa)
		if psa.Mode < out.Mode {
			out.Mode = psa.Mode
		}
		if psa.Mode != Fit {
			out.Reason = worse(out.Reason, reason)
			out.problems = append(out.problems, podSetProblem{name: ps.Name, notes: notes})
		}
	}
	if out.Mode == Fit {
		out.Reason = ""
		out.problems = nil
	} else if out.Mode == Preempt {
		out.Reason = WaitingForQuota
	}
	slices.SortFunc(out.PreemptFor, resources.CompareFlavorResource)
	out.PreemptFor = slices.Compact(out.PreemptFor)
	return out
}

// podSetRequests returns the requests of a PodSet at count pods.
func (a *Assigner) podSetRequests(shape *workload.Shape, idx int, count int32) resources.Requests {
	key := requestsKey{shape: shape, podSet: idx, count: count}
	r, ok := a.requests[key]
	if !ok {
		r = shape.PodSets[idx].Requests(count)
		a.requests[key] = r
	}
	return r
}

// choice is the evaluation of one flavor for the resources of one group.
type choice struct {
	flavor kueue.ResourceFlavorReference
	mode   Mode
	level  int
	// preempt lists the pairs that need preemption with this flavor.
	preempt []resources.FlavorResource
}

func (a *Assigner) assignPodSet(cq *state.ClusterQueue, node *hierarchy.Node, shape *workload.Shape,
	idx int, count int32, pin map[corev1.ResourceName]kueue.ResourceFlavorReference, out *Assignment) (PodSetAssignment, Reason, []note) {
	ps := &shape.PodSets[idx]
	psa := PodSetAssignment{
		Name: ps.Name, Count: count, Mode: Fit,
		Requests: a.podSetRequests(shape, idx, count),
		Flavors:  make(map[corev1.ResourceName]kueue.ResourceFlavorReference, len(ps.Resources)),
	}
	var reason Reason
	var notes []note
	var doneArr [8]bool
	done := doneArr[:0]
	if len(ps.Resources) > len(doneArr) {
		done = make([]bool, len(ps.Resources))
	} else {
		done = doneArr[:len(ps.Resources)]
	}
	for ri, r := range ps.Resources {
		if done[ri] || psa.Requests[r] == 0 && r != corev1.ResourcePods {
			continue
		}
		group := cq.GroupFor(r)
		if group == nil {
			if r == corev1.ResourcePods || a.opts.IgnoreUndeclared {
				continue
			}
			psa.Mode, reason = NoFit, worse(reason, NoMatchingFlavor)
			notes = append(notes, note{kind: noteUncovered, fr: resources.FlavorResource{Resource: r}})
			continue
		}
		var names []corev1.ResourceName
		for gi, gr := range ps.Resources {
			if group.Covers(gr) {
				names = append(names, gr)
				done[gi] = true
			}
		}
		candidates := group.Flavors
		if f, ok := pin[names[0]]; ok {
			candidates = []kueue.ResourceFlavorReference{f}
		}
		best, why, groupNotes := a.pickFlavor(cq, node, shape, idx, candidates, names, psa.Requests, out.Usage)
		if best == nil {
			psa.Mode = NoFit
			reason = worse(reason, why)
			notes = append(notes, groupNotes...)
			continue
		}
		for _, n := range names {
			psa.Flavors[n] = best.flavor
			fr := resources.FlavorResource{Flavor: best.flavor, Resource: n}
			out.Usage[fr] = resources.Add(out.Usage[fr], psa.Requests[n])
		}
		if best.mode < psa.Mode {
			psa.Mode = best.mode
		}
		if best.mode == Preempt {
			out.PreemptFor = append(out.PreemptFor, best.preempt...)
			notes = append(notes, groupNotes...)
			reason = worse(reason, WaitingForQuota)
		}
		out.BorrowingLevel = max(out.BorrowingLevel, best.level)
	}
	return psa, reason, notes
}
