package preemption

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
)

// variant names a way of choosing victims; it decides the reasons.
type variant int

const (
	// inQueue: only the preemptor's own queue, borrowing allowed.
	inQueue variant = iota
	// reclaiming: the preemptor must fit within its nominal quota.
	reclaiming
	// whileBorrowing: the preemptor may borrow (borrowWithinCohort).
	whileBorrowing
	// fairSharing: victims in other queues chosen by share.
	fairSharing
)

// classic tries, in order: only the preemptor's own queue when every
// candidate is there; preempting while borrowing when borrowWithinCohort
// allows it; reclaiming lent quota with the preemptor within its nominal
// quota; and finally the preemptor's own queue alone.
func (f *Finder) classic(p *Preemptor, cands []candidate) []Target {
	same := filter(cands, func(c candidate) bool { return c.sameQueue })
	if len(same) == len(cands) {
		return f.minimal(p, cands, inQueue)
	}
	if p.CQ.Preemption.BorrowWithinCohort != kueue.BorrowWithinCohortPolicyNever {
		allowed := filter(cands, func(c candidate) bool { return c.sameQueue || c.whileBorrowing })
		if t := f.minimal(p, allowed, whileBorrowing); t != nil {
			return t
		}
	}
	allowed := filter(cands, func(c candidate) bool { return c.sameQueue || c.reclaim })
	if t := f.minimal(p, allowed, reclaiming); t != nil {
		return t
	}
	if len(same) == 0 {
		return nil
	}
	return f.minimal(p, same, inQueue)
}

// minimal removes candidates in order until the preemptor fits, then gives
// back, from the last but one to the first, every victim not needed. It
// returns nil when even all allowed candidates are not enough. The tree is
// left as it was.
func (f *Finder) minimal(p *Preemptor, cands []candidate, v variant) []Target {
	if !f.mayFree(p, cands) {
		return nil
	}
	var removed []candidate
	var above *hierarchy.Node
	fits := false
	for _, c := range cands {
		if !c.sameQueue && !f.eligibleNow(p, c, v) {
			continue
		}
		f.tree.RemoveUsage(c.node, c.a.Usage)
		removed = append(removed, c)
		if v == reclaiming {
			above = deeper(above, victimLCA(c, p))
		}
		if f.fitsVariant(p, v, above) {
			fits = true
			break
		}
	}
	if !fits {
		f.restore(removed)
		return nil
	}
	if v != reclaiming {
		victims := f.giveBackUnneeded(p, removed, func(int, []bool) bool { return f.fits(p, true) })
		return f.checked(p, victims, v)
	}
	// The victims kept while victim i is tried back are those before i and
	// those after i found needed; their deepest common ancestor with the
	// preemptor is the prefix's folded with the needed suffix's, kept up
	// to date as the give-back walks down from the end.
	lcas := make([]*hierarchy.Node, len(removed))
	prefix := make([]*hierarchy.Node, len(removed)+1)
	for i, c := range removed {
		lcas[i] = victimLCA(c, p)
		prefix[i+1] = deeper(prefix[i], lcas[i])
	}
	var suffix *hierarchy.Node
	victims := f.giveBackUnneeded(p, removed, func(i int, needed []bool) bool {
		if needed[i+1] {
			suffix = deeper(suffix, lcas[i+1])
		}
		return f.fitsVariant(p, v, deeper(prefix[i], suffix))
	})
	return f.checked(p, victims, v)
}

// checked puts the victims' quota back in the tree and returns them as
// targets, unless they could come back and evict the preemptor in turn.
func (f *Finder) checked(p *Preemptor, victims []candidate, v variant) []Target {
	ok := f.noWayBack(p, victims, false)
	f.restore(victims)
	if !ok {
		return nil
	}
	return targets(victims, v)
}

// fitsVariant checks the preemptor fits with the victims removed. When
// reclaiming, the quota it uses must also be quota its side of the tree
// owns: the lowest subtree covering the preemptor's usage must lie strictly
// below above, the deepest common ancestor of an other-queue victim with
// the preemptor (or, with none, be its own queue: within nominal quota).
func (f *Finder) fitsVariant(p *Preemptor, v variant, above *hierarchy.Node) bool {
	if v != reclaiming {
		return f.fits(p, true)
	}
	for fr, need := range p.Usage {
		if need > p.Node.Available(fr) {
			return false
		}
		fit := p.Node.LowestFitting(fr, need)
		switch {
		case fit == nil:
			return false
		case above == nil:
			if fit != p.Node {
				return false
			}
		case fit == above || !above.IsAncestorOf(fit):
			return false
		}
	}
	return true
}

// mayFree is a quick necessary condition: evicting every candidate frees at
// most their usage, so if even that is not enough, no search is needed.
func (f *Finder) mayFree(p *Preemptor, cands []candidate) bool {
	for fr, need := range p.Usage {
		avail := p.Node.Available(fr)
		if need <= avail {
			continue
		}
		var all resources.Amount
		for _, c := range cands {
			all = resources.Add(all, c.a.Usage[fr])
		}
		if need > resources.Add(avail, all) {
			return false
		}
	}
	return true
}

// eligibleNow checks, with the victims removed so far, that another queue's
// candidate may still be taken: its side of the tree must still borrow, and
// a borrowing preemptor only takes workloads that ran wholly on borrowed
// quota, at every level up to the common ancestor (so that they can never
// come back by evicting the preemptor).
func (f *Finder) eligibleNow(p *Preemptor, c candidate, v variant) bool {
	if !branchBorrowing(c.node, p.Node, c.a.Usage, p.Contested) {
		return false
	}
	if v != whileBorrowing {
		return true
	}
	lca := lowestCommonAncestor(c.node, p.Node)
	f.tree.RemoveUsage(c.node, c.a.Usage)
	defer f.tree.AddUsage(c.node, c.a.Usage)
	for n := c.node; n != nil && n != lca; n = n.Parent() {
		for _, fr := range p.Contested {
			if c.a.Usage[fr] > 0 && n.Usage(fr) < n.SubtreeQuota(fr) {
				return false
			}
		}
	}
	return true
}

// giveBackUnneeded re-adds victims, last but one first, that the preemptor
// fits without; it returns the victims still needed (still removed). fits
// is asked with victim i given back, i going down from the last but one;
// the victims kept then are those before i and those after i found needed
// (see keptExcept).
func (f *Finder) giveBackUnneeded(p *Preemptor, removed []candidate, fits func(i int, needed []bool) bool) []candidate {
	needed := make([]bool, len(removed))
	needed[len(removed)-1] = true
	for i := len(removed) - 2; i >= 0; i-- {
		c := removed[i]
		f.tree.AddUsage(c.node, c.a.Usage)
		if fits(i, needed) {
			continue
		}
		f.tree.RemoveUsage(c.node, c.a.Usage)
		needed[i] = true
	}
	var out []candidate
	for i, c := range removed {
		if needed[i] {
			out = append(out, c)
		}
	}
	return out
}

// keptExcept lists the victims still removed while victim i is tried back:
// those before i not yet decided, and those after i found needed.
func keptExcept(removed []candidate, needed []bool, i int) []candidate {
	var out []candidate
	for j, c := range removed {
		if j < i || (j > i && needed[j]) {
			out = append(out, c)
		}
	}
	return out
}

// fits reports whether the preemptor's usage fits the tree now; without
// borrowing it must also stay within its queue's own quota.
func (f *Finder) fits(p *Preemptor, allowBorrowing bool) bool {
	for fr, need := range p.Usage {
		if need > p.Node.Available(fr) {
			return false
		}
		if !allowBorrowing && resources.Add(p.Node.Usage(fr), need) > p.Node.SubtreeQuota(fr) {
			return false
		}
	}
	return true
}

func (f *Finder) restore(removed []candidate) {
	for _, c := range removed {
		f.tree.AddUsage(c.node, c.a.Usage)
	}
}

func targets(victims []candidate, v variant) []Target {
	out := make([]Target, len(victims))
	for i, c := range victims {
		reason := kueue.InClusterQueueReason
		if !c.sameQueue {
			switch v {
			case whileBorrowing:
				reason = kueue.InCohortReclaimWhileBorrowingReason
			case fairSharing:
				reason = kueue.InCohortFairSharingReason
				if c.withinNominal {
					reason = kueue.InCohortReclamationReason
				}
			default:
				reason = kueue.InCohortReclamationReason
			}
		}
		out[i] = Target{Workload: c.a, Reason: reason}
	}
	return out
}

// victimLCA is the lowest common ancestor of another queue's victim with
// the preemptor; nil for the preemptor's own queue's.
func victimLCA(c candidate, p *Preemptor) *hierarchy.Node {
	if c.sameQueue {
		return nil
	}
	return lowestCommonAncestor(c.node, p.Node)
}

// deeper returns the deeper of two nodes on one path to the root; nil
// counts as shallowest.
func deeper(a, b *hierarchy.Node) *hierarchy.Node {
	if a == nil || (b != nil && b.Depth() > a.Depth()) {
		return b
	}
	return a
}

func filter(cands []candidate, keep func(candidate) bool) []candidate {
	var out []candidate
	for _, c := range cands {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}
