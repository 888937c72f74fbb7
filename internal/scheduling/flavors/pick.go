package flavors

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// pickFlavor walks the candidate flavors of a group in order and returns the chosen one,
// or nil with the failure reason and messages for each flavor. A flavor's
// reason is the worst over its resources (it needs them all); the group's is
// the most hopeful over its flavors (any one would do).
func (a *Assigner) pickFlavor(cq *state.ClusterQueue, node *hierarchy.Node, shape *workload.Shape, idx int,
	candidates []kueue.ResourceFlavorReference, names []corev1.ResourceName, requests resources.Requests,
	assumed resources.FlavorResourceQuantities) (*choice, Reason, []note) {
	var best *choice
	var reason Reason
	var notes []note
	for _, fname := range candidates {
		if ok, why := a.eligible(shape, idx, fname); !ok {
			reason = moreHopeful(reason, NoMatchingFlavor)
			notes = append(notes, note{text: why})
			continue
		}
		c := choice{flavor: fname, mode: Fit}
		var flavorReason Reason
		for _, r := range names {
			fr := resources.FlavorResource{Flavor: fname, Resource: r}
			need := resources.Add(requests[r], assumed[fr])
			mode, level, why, n := classify(cq, node, fr, need, a.opts.FairSharing)
			if mode < c.mode {
				c.mode = mode
			}
			c.level = max(c.level, level)
			if mode == Preempt {
				c.preempt = append(c.preempt, fr)
			}
			if mode != Fit {
				notes = append(notes, n)
				flavorReason = worse(flavorReason, why)
			}
		}
		reason = moreHopeful(reason, flavorReason)
		if c.mode == NoFit {
			continue
		}
		if best == nil || better(&c, best, cq.Preference) {
			chosen := c
			best = &chosen
		}
		if stopsSearch(&c, cq) {
			break
		}
	}
	return best, reason, notes
}

// stopsSearch applies flavorFungibility: a flavor that fits without
// borrowing always ends the search; one that fits by borrowing or needs
// preemption ends it when the policy says MayStopSearch.
func stopsSearch(c *choice, cq *state.ClusterQueue) bool {
	switch {
	case c.mode == Fit && c.level == 0:
		return true
	case c.mode == Fit:
		return cq.WhenCanBorrow == kueue.MayStopSearch
	case c.mode == Preempt:
		return cq.WhenCanPreempt == kueue.MayStopSearch && (c.level == 0 || cq.WhenCanBorrow == kueue.MayStopSearch)
	}
	return false
}

// better reports whether c beats best under the preference. On a tie the
// earlier flavor (best) is kept.
func better(c, best *choice, pref kueue.FlavorFungibilityPreference) bool {
	if pref == kueue.PreemptionOverBorrowing {
		if c.level != best.level {
			return c.level < best.level
		}
		return c.mode > best.mode
	}
	if c.mode != best.mode {
		return c.mode > best.mode
	}
	return c.level < best.level
}

// classify says how `need` of fr fits the ClusterQueue now.
func classify(cq *state.ClusterQueue, node *hierarchy.Node, fr resources.FlavorResource, need resources.Amount, fair bool) (Mode, int, Reason, note) {
	if potential := node.PotentialAvailable(fr); need > potential {
		return NoFit, 0, ExceedsMaxQuota, note{kind: noteExceedsMax, fr: fr, need: need, have: potential}
	}
	available := node.Available(fr)
	if need <= available {
		level, _ := node.BorrowingLevel(fr, need)
		return Fit, level, "", note{}
	}
	n := note{kind: noteInsufficient, fr: fr, need: need, have: available}
	if mayPreempt(cq, node, fr, need, fair) {
		level, _ := node.BorrowingLevel(fr, need)
		return Preempt, level, WaitingForQuota, n
	}
	return NoFit, 0, WaitingForQuota, n
}

// mayPreempt tells whether preemption could free the quota, following
// Kueue: when the request is within the ClusterQueue's nominal quota, by
// preempting in the queue or reclaiming lent quota; when it fits in a
// subtree below the root, by reclaiming from whoever borrows in it;
// otherwise only by preempting while borrowing (borrowWithinCohort, or
// reclaimWithinCohort under fair sharing).
func mayPreempt(cq *state.ClusterQueue, node *hierarchy.Node, fr resources.FlavorResource, need resources.Amount, fair bool) bool {
	p := cq.Preemption
	within := p.WithinClusterQueue != kueue.PreemptionPolicyNever
	reclaim := p.ReclaimWithinCohort != kueue.PreemptionPolicyNever
	if q, _ := node.Quota(fr); need <= q.Nominal {
		return within || reclaim
	}
	if node.FitsBelowRoot(fr, need) {
		return within || reclaim
	}
	return p.BorrowWithinCohort != kueue.BorrowWithinCohortPolicyNever || (fair && reclaim)
}

func show(name corev1.ResourceName, a resources.Amount) string {
	return resources.Format(name, a)
}

func (a *Assigner) eligible(shape *workload.Shape, idx int, fname kueue.ResourceFlavorReference) (bool, string) {
	key := eligibilityKey{shape: shape, podSet: idx, flavor: fname}
	if e, ok := a.cache[key]; ok {
		return e.ok, e.reason
	}
	f, ok := a.flavors[fname]
	var e eligibility
	if !ok {
		e = eligibility{reason: fmt.Sprintf("flavor %s not found", fname)}
	} else {
		e.ok, e.reason = eligible(&shape.PodSets[idx], f)
	}
	a.cache[key] = e
	return e.ok, e.reason
}
