package scheduling

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
	"github.com/kuota-dev/kuota/internal/workload"
)

// maxMinimized bounds the victims whose need is checked one by one after
// the search: each check rebuilds the trees.
const maxMinimized = 16

// preemptForTopology handles a head that fits by quota but not on the
// nodes of its topology. It looks among the workloads that hold capacity
// on the same TAS flavors and that its policies let it preempt: first
// those of other ClusterQueues of its cohort tree, by the rules of quota
// preemption (reclaimed when the head stays within its own quota; taken
// while borrowing by borrowWithinCohort, or by fair sharing's strategies,
// when it borrows), then those of its own ClusterQueue that
// withinClusterQueue allows; lowest priority and most recently admitted
// first. It takes the shortest run of them whose pods, gone, let it be
// placed; then gives back those not needed, and refuses a set of which
// one could come back and evict it in turn. The victims are taken, the
// quota held, and the head waits for them (or, when they all end soon,
// for their ends: the same patience as for quota). Victims chosen in an
// earlier cycle and still being evicted are waited for, not added to. It
// reports false when no set of victims helps; the caller then refuses the
// head.
func (c *cycle) preemptForTopology(cur *cursor, w *workload.Info, asg flavors.Assignment, msg string) bool {
	pol := cur.cq.Preemption
	if (pol.WithinClusterQueue == kueue.PreemptionPolicyNever && pol.ReclaimWithinCohort == kueue.PreemptionPolicyNever) ||
		len(c.snap.TopologyBases) == 0 {
		return false
	}
	used := c.topologyFlavors(&asg)
	if len(used) == 0 {
		return false
	}
	finder := c.victimFinder()
	targets := c.keptTopologyVictims(cur, w, finder)
	if targets == nil {
		p := c.topologyPreemptor(cur, w, &asg, used)
		cands := c.topologyCandidates(cur, w, p, used, finder)
		victims := c.fewestVictims(w, &asg, used, cands)
		if victims == nil || !finder.NoWayBack(p, victims) {
			return false
		}
		targets = victims
	}
	finder.Take(targets)
	c.addUsage(cur, asg.Usage)
	cur.hold(w.Shape)
	d := Decision{Workload: w, Assignment: &asg, Held: asg.Usage}
	if wait, ok := c.endingSoon(targets); ok {
		d.Reason, d.Recheck = WaitingForQuota, c.lateAt(targets)
		d.Message = fmt.Sprintf("waiting for %d running workload(s) expected to end within %s rather than preempting them, for room in the topology",
			len(targets), wait.Round(1e9))
	} else {
		d.Reason, d.Victims = WaitingForPreemptedWorkloads, targets
		d.Message = fmt.Sprintf("waiting for %d preempted workload(s) to free room in the topology (%s)", len(targets), msg)
	}
	c.decide(d)
	cur.pos++
	if cur.cq.QueueingStrategy == kueue.StrictFIFO {
		c.blockRest(cur, w)
	}
	return true
}

// topologyPreemptor describes the head for the victim finder: its quota,
// contested on the TAS flavors it would use.
func (c *cycle) topologyPreemptor(cur *cursor, w *workload.Info, asg *flavors.Assignment, used []kueue.ResourceFlavorReference) *preemption.Preemptor {
	var contested []resources.FlavorResource
	for fr := range asg.Usage {
		if slices.Contains(used, fr.Flavor) {
			contested = append(contested, fr)
		}
	}
	slices.SortFunc(contested, func(a, b resources.FlavorResource) int {
		return cmp.Or(cmp.Compare(a.Flavor, b.Flavor), cmp.Compare(a.Resource, b.Resource))
	})
	return &preemption.Preemptor{Info: w, CQ: cur.cq, Node: c.future.ClusterQueue(cur.name), Usage: asg.Usage, Contested: contested}
}

// topologyCandidates lists the workloads topology preemption may take for
// the head, in victim order, with their reasons: other ClusterQueues'
// (reclaimed, or taken while borrowing or by fair sharing: see
// preemption.Finder.OtherQueueCandidates), then its own queue's.
func (c *cycle) topologyCandidates(cur *cursor, w *workload.Info, p *preemption.Preemptor, used []kueue.ResourceFlavorReference,
	finder *preemption.Finder) []preemption.Target {
	var others []preemption.Target
	for _, t := range finder.OtherQueueCandidates(p) {
		if usesFlavors(t.Workload, used) {
			others = append(others, t)
		}
	}
	var own []preemption.Target
	if pol := cur.cq.Preemption.WithinClusterQueue; pol != kueue.PreemptionPolicyNever {
		for _, a := range c.snap.TopologyUsers {
			if a.ClusterQueue == cur.name && !a.Evicting && !finder.Taken(a.Key) && usesFlavors(a, used) &&
				preemption.WithinAllows(pol, a, w) {
				own = append(own, preemption.Target{Workload: a, Reason: kueue.InClusterQueueReason})
			}
		}
	}
	sortVictims(own) // others keep the finder's order (see OtherQueueCandidates)
	return append(others, own...)
}

// sortVictims orders candidates lowest priority first, then the most
// recently admitted (it has lost least work).
func sortVictims(cands []preemption.Target) {
	slices.SortStableFunc(cands, func(x, y preemption.Target) int {
		a, b := x.Workload, y.Workload
		if r := cmp.Compare(a.Priority, b.Priority); r != 0 {
			return r
		}
		if r := cmp.Compare(b.ReservedAt, a.ReservedAt); r != 0 {
			return r
		}
		if r := cmp.Compare(b.QueueOrderTime, a.QueueOrderTime); r != 0 {
			return r // times are in seconds: then the newest
		}
		return strings.Compare(a.Key.String(), b.Key.String())
	})
}

// keptTopologyVictims returns the victims the head chose in an earlier
// cycle that still hold capacity, being evicted, when there are any: a
// new search would add evictions while the first ones finish.
func (c *cycle) keptTopologyVictims(cur *cursor, w *workload.Info, finder *preemption.Finder) []preemption.Target {
	if w.Hint == nil || len(w.Hint.Victims) == 0 {
		return nil
	}
	var out []preemption.Target
	for _, v := range w.Hint.Victims {
		for _, a := range c.snap.AdmittedIn(v.ClusterQueue) {
			if a.Key == v.Key && a.UID == v.UID && a.Evicting && len(a.Topology) > 0 && !finder.Taken(a.Key) {
				out = append(out, preemption.Target{Workload: a, Reason: v.Reason})
			}
		}
	}
	return out
}

// fewestVictims returns the shortest run of candidates (in victim order,
// see topologyCandidates) whose removal lets the workload be placed, less
// those not needed; nil when removing them all does not help.
func (c *cycle) fewestVictims(w *workload.Info, asg *flavors.Assignment, used []kueue.ResourceFlavorReference,
	cands []preemption.Target) []preemption.Target {
	if len(cands) == 0 {
		return nil
	}
	fits := func(victims []preemption.Target) bool {
		without := make(map[types.NamespacedName]bool, len(victims))
		for _, t := range victims {
			without[t.Workload.Key] = true
		}
		trees := c.treesWithout(used, without)
		_, _, ok := c.placeOn(w, asg.PodSets, func(f kueue.ResourceFlavorReference) *tas.Tree { return trees[f] })
		return ok
	}
	if !fits(cands) {
		return nil
	}
	// Removing more never hurts: the shortest fitting prefix by bisection.
	lo, hi := 1, len(cands)
	for lo < hi {
		mid := (lo + hi) / 2
		if fits(cands[:mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	victims := slices.Clone(cands[:lo])
	if len(victims) <= maxMinimized {
		for i := len(victims) - 2; i >= 0; i-- {
			rest := slices.Delete(slices.Clone(victims), i, i+1)
			if fits(rest) {
				victims = rest
			}
		}
	}
	return victims
}

// treesWithout builds the flavors' trees as the cycle sees them, less the
// pods of the workloads in without: the nodes less other pods, the
// admitted workloads' pods and the cycle's placements.
func (c *cycle) treesWithout(used []kueue.ResourceFlavorReference, without map[types.NamespacedName]bool) map[kueue.ResourceFlavorReference]*tas.Tree {
	out := make(map[kueue.ResourceFlavorReference]*tas.Tree, len(used))
	for _, f := range used {
		base := c.snap.TopologyBases[f]
		if base == nil {
			continue
		}
		t := base.Clone()
		for _, a := range c.snap.TopologyUsers {
			if without[a.Key] {
				continue
			}
			for _, u := range a.Topology {
				if u.Flavor == f && u.Assignment != nil {
					t.Use(u.Assignment, u.PerPod)
				}
			}
		}
		for _, p := range c.placed {
			if p.flavor == f {
				t.Use(p.assignment, p.perPod)
			}
		}
		out[f] = t
	}
	return out
}

// topologyFlavors lists the TAS flavors with a tree an assignment uses.
func (c *cycle) topologyFlavors(asg *flavors.Assignment) []kueue.ResourceFlavorReference {
	var out []kueue.ResourceFlavorReference
	for i := range asg.PodSets {
		if f, ok := topologyFlavor(c, &asg.PodSets[i]); ok && c.snap.TopologyBases[f] != nil && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

func usesFlavors(a *state.Admitted, flavors []kueue.ResourceFlavorReference) bool {
	return slices.ContainsFunc(a.Topology, func(u state.TopologyUse) bool { return slices.Contains(flavors, u.Flavor) })
}
