package preemption

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/fairsharing"
)

// noWayBack checks, with the victims gone, that none of them could come
// back and evict the preemptor in turn. A victim could only take the
// preemptor back through a (flavor, resource) pair where the preemptor's
// queue will borrow and that the victim may be assigned on its return (a
// resource it requests, in a flavor its queue offers): an exposed pair. For
// every exposed pair, the victim's queue, with the victim back, must be over
// its own quota (so it cannot come back within its nominal quota and
// reclaim); under fair sharing, the victim's side, with the victim back,
// must also keep a share above the preemptor's (so no strategy lets it
// preempt).
func (f *Finder) noWayBack(p *Preemptor, victims []candidate, fair bool) bool {
	for _, c := range victims {
		if c.sameQueue {
			continue
		}
		exposed := f.exposed(p, c)
		if len(exposed) == 0 {
			continue
		}
		// The victim may come back smaller (partial admission).
		smallest := c.a.SmallestUsage()
		perResource := map[corev1.ResourceName]resources.Amount{}
		for fr, a := range smallest {
			perResource[fr.Resource] = resources.Add(perResource[fr.Resource], a)
		}
		for _, fr := range exposed {
			if resources.Add(c.node.Usage(fr), perResource[fr.Resource]) <= c.node.SubtreeQuota(fr) {
				return false
			}
		}
		if !fair {
			continue
		}
		lca := lowestCommonAncestor(c.node, p.Node)
		if lca == nil {
			return false
		}
		mine, theirs := lca.ChildToward(p.Node), lca.ChildToward(c.node)
		myFinal, _ := fairsharing.Share(mine, p.Usage, f.weight(mine))
		theirsBack, _ := fairsharing.Share(theirs, smallest, f.weight(theirs))
		if theirsBack <= myFinal {
			return false
		}
	}
	return true
}

// exposed lists the pairs in which the preemptor's queue would borrow once
// admitted and that the victim's queue could assign to the victim.
func (f *Finder) exposed(p *Preemptor, c candidate) []resources.FlavorResource {
	cq := f.snap.ClusterQueues[c.a.ClusterQueue]
	if cq == nil {
		return nil
	}
	requests := map[corev1.ResourceName]bool{}
	for fr, a := range c.a.Usage {
		if a > 0 {
			requests[fr.Resource] = true
		}
	}
	var out []resources.FlavorResource
	for fr, need := range p.Usage {
		if !requests[fr.Resource] || resources.Add(p.Node.Usage(fr), need) <= p.Node.SubtreeQuota(fr) {
			continue
		}
		if g := cq.GroupFor(fr.Resource); g != nil {
			for _, fl := range g.Flavors {
				if fl == fr.Flavor {
					out = append(out, fr)
				}
			}
		}
	}
	return out
}
