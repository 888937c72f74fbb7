package scheduling

import (
	"fmt"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// evaluateHead computes the head's assignment. When the head fits, or could
// fit by preempting, it returns true; otherwise it records the decision,
// moves past the head (for StrictFIFO, past the whole queue) and returns
// false.
func (c *cycle) evaluateHead(cur *cursor) bool {
	w := cur.items[cur.pos]
	if d, ok := c.precheck(cur, w); !ok {
		c.decide(d)
		cur.pos++
		return false
	}
	if i, ok := cur.failedBefore(w); ok && w.Replaces == nil {
		prev := &c.result.Decisions[i]
		c.decide(Decision{Workload: w, Reason: prev.Reason, Message: prev.Message, Assignment: prev.Assignment, Deferred: prev.Deferred,
			BehindHolder: cur.holders[w.Shape]})
		cur.pos++
		return false
	}
	if cur.searchFailed && needsQuota(cur, w) && c.noFreeQuota(cur) {
		// Nothing can fit and the queue's preemption search already failed
		// this cycle: the workload waits for the next cycle unevaluated.
		if cur.noQuotaMessage == "" { // one string for the queue's rest
			cur.noQuotaMessage = "ClusterQueue " + string(cur.name) + " has no free quota left in this cycle"
		}
		c.decide(Decision{Workload: w, Reason: WaitingForQuota, Deferred: true, Message: cur.noQuotaMessage})
		cur.pos++
		return false
	}
	asg, hinted := c.assignHinted(cur, w)
	switch {
	case hinted:
	case w.Replaces != nil:
		asg = c.assignReplacement(cur, w)
	default:
		asg = c.assigner.Assign(cur.cq, cur.node, w.Shape, nil)
	}
	if asg.Mode == flavors.NoFit && w.Shape.HasPartialAdmission() {
		// The largest count that fits, or could by preemption.
		anyMode := func(*flavors.Assignment) bool { return true }
		if partial, ok := c.assigner.AssignPartial(cur.cq, cur.node, w.Shape, anyMode); ok {
			asg = partial
		}
	}
	if asg.Mode != flavors.NoFit {
		cur.asg = asg
		cur.version = c.versions[cur.root]
		return true
	}
	c.refuse(cur, w, Decision{Workload: w, Reason: Reason(asg.Reason), Assignment: &asg}, noPriority)
	return false
}

// assignHinted evaluates a preempting workload on the assignment it evicted
// others for, so that it takes the quota freed for it. It reports false when
// there is no usable hint or the hinted assignment does not fit at all.
func (c *cycle) assignHinted(cur *cursor, w *workload.Info) (flavors.Assignment, bool) {
	if !w.Preempting || w.Hint == nil {
		return flavors.Assignment{}, false
	}
	asg, ok := c.assigner.AssignHinted(cur.cq, cur.node, w.Shape, w.Hint)
	return asg, ok && asg.Mode != flavors.NoFit
}

// refuse records a refusal of the head and moves on: past the whole queue
// for StrictFIFO, past the head for BestEffortFIFO, remembering the shape.
func (c *cycle) refuse(cur *cursor, w *workload.Info, d Decision, priority int32) {
	d.BehindHolder = cur.holders[w.Shape]
	c.decide(d)
	cur.pos++
	if cur.cq.QueueingStrategy == kueue.StrictFIFO {
		c.blockRest(cur, w)
		return
	}
	if w.Replaces == nil { // a replacement's refusal depends on its pinned flavors
		cur.fail(failKey{shape: w.Shape, priority: priority}, len(c.result.Decisions)-1)
	}
}

// hold notes that a workload of the shape holds quota this cycle.
func (cur *cursor) hold(shape *workload.Shape) {
	if cur.holders == nil {
		cur.holders = map[*workload.Shape]bool{}
	}
	cur.holders[shape] = true
}

// fail remembers the decision (its index) of a refused shape.
func (cur *cursor) fail(key failKey, decision int) {
	if key.priority > deferredKey {
		if cur.failedPriority == nil {
			cur.failedPriority = map[*workload.Shape][]priorityFailure{}
		}
		cur.failedPriority[key.shape] = append(cur.failedPriority[key.shape], priorityFailure{priority: key.priority, decision: decision})
		return
	}
	if cur.failed == nil {
		cur.failed = map[failKey]int{}
	}
	cur.failed[key] = decision
}

// failedBefore returns the refusal (its index in Result.Decisions) of an
// earlier workload of the same shape that implies this one's.
func (cur *cursor) failedBefore(w *workload.Info) (int, bool) {
	if len(cur.failed) > 0 {
		if i, ok := cur.failed[failKey{shape: w.Shape, priority: noPriority}]; ok {
			return i, true
		}
		if i, ok := cur.failed[failKey{shape: w.Shape, priority: deferredKey}]; ok {
			return i, true
		}
	}
	for _, f := range cur.failedPriority[w.Shape] {
		if w.Priority <= f.priority {
			return f.decision, true
		}
	}
	return 0, false
}

// preemptForHead finds victims for a head that needs preemption. With
// victims, the head waits for them and its quota is held for the rest of the
// cycle; without, partial admission is tried, then the head is refused.
func (c *cycle) preemptForHead(cur *cursor) {
	w := cur.items[cur.pos]
	asg := cur.asg
	if cur.searchFailed {
		d := Decision{Workload: w, Reason: WaitingForQuota, Assignment: &asg, Deferred: true,
			Message: "the search for workloads to preempt is deferred to the next cycle"}
		c.decide(d)
		cur.pos++
		if w.Replaces == nil {
			cur.fail(failKey{shape: w.Shape, priority: deferredKey}, len(c.result.Decisions)-1)
		}
		return
	}
	finder := c.victimFinder()
	targets, ok := c.findVictims(cur, w, &asg)
	if !ok && w.Shape.HasPartialAdmission() {
		// Fewer pods: the largest count that fits now or by preemption.
		var partial flavors.Assignment
		partial, ok = c.assigner.AssignPartial(cur.cq, cur.node, w.Shape, func(a *flavors.Assignment) bool {
			if a.Mode == flavors.Fit {
				return true
			}
			_, found := c.findVictims(cur, w, a)
			return found
		})
		if ok {
			asg = partial
			if asg.Mode == flavors.Fit {
				cur.asg = asg
				c.admitHead(cur)
				return
			}
			targets, ok = c.findVictims(cur, w, &asg)
		}
	}
	if !ok {
		cur.searchFailed = true
		held := c.holdUnreclaimable(cur, &asg)
		if len(held) > 0 {
			cur.hold(w.Shape)
		}
		c.refuse(cur, w, Decision{Workload: w, Reason: WaitingForQuota, Message: "no workloads can be preempted to make room",
			Assignment: &asg, Held: held}, w.Priority)
		return
	}
	// The quota is held for the preemptor for the rest of the cycle: in the
	// working tree on top of the victims (they still run), and in the future
	// tree in their place.
	finder.Take(targets)
	c.addUsage(cur, asg.Usage)
	if wait, ok := c.endingSoon(targets); ok {
		// Evicting them would free nothing sooner than their own end:
		// wait for them, holding the quota.
		cur.hold(w.Shape)
		c.decide(Decision{Workload: w, Assignment: &asg, Reason: WaitingForQuota, Held: asg.Usage,
			Message: fmt.Sprintf("waiting for %d running workload(s) expected to end within %s rather than preempting them",
				len(targets), wait.Round(time.Second)),
			Recheck: c.lateAt(targets)})
		cur.pos++
		if cur.cq.QueueingStrategy == kueue.StrictFIFO {
			c.blockRest(cur, w)
		}
		return
	}
	msg := fmt.Sprintf("waiting for %d preempted workload(s) to release quota", len(targets))
	if len(targets) == 0 {
		msg = "waiting for workloads preempted earlier in this cycle to release quota"
	}
	cur.hold(w.Shape)
	c.decide(Decision{Workload: w, Assignment: &asg, Victims: targets, Reason: WaitingForPreemptedWorkloads, Message: msg,
		Held: asg.Usage})
	cur.pos++
	if cur.cq.QueueingStrategy == kueue.StrictFIFO {
		c.blockRest(cur, w)
	}
}

// endingSoon reports whether every target is expected to end by itself
// within the patience, and the longest wait. The patience is counted on
// top of how long evictions take now (Snapshot.EvictionDelay): a victim
// that ends by itself before its eviction would have freed the quota is
// waited for, since evicting it gains nothing. A target whose end is unknown
// is not, nor one that overran its estimate by more than the patience (an
// estimate is a guess: a small overrun is still "about to end"), so a
// preemptor waits at most twice the patience plus the eviction delay. When most running workloads
// are late together (lateTogether), a late target is waited for up to
// lateCap past its estimate: what is late is then the reporting of ends
// (an API server that stalled, jobs' status writes held up), not this job,
// unless its estimate was borrowed from other LocalQueues of its cohort
// tree (it may be another kind of job of the same size).
func (c *cycle) endingSoon(targets []preemption.Target) (time.Duration, bool) {
	patience := c.opts.Patience
	if patience <= 0 || len(targets) == 0 {
		return 0, false
	}
	now, delay := c.snap.Now, c.snap.EvictionDelay
	wait := patience + delay
	var longest time.Duration
	for _, t := range targets {
		end := t.Workload.ExpectedEnd
		if end == 0 {
			return 0, false
		}
		if late := time.Duration(now - end); late > wait && (t.Workload.EstimateBorrowed || late > lateCap*patience+delay || !c.lateTogether()) {
			return 0, false
		}
		left := max(0, time.Duration(end-now))
		if left > wait {
			return 0, false
		}
		longest = max(longest, left)
	}
	return longest, true
}

// lateAt is when the first of the targets a preemptor waits for is late
// by more than the patience (plus the eviction delay): endingSoon may then
// answer otherwise. A target already that late (waited for because
// workloads are late together) makes it now.
func (c *cycle) lateAt(targets []preemption.Target) int64 {
	wait := int64(c.opts.Patience + c.snap.EvictionDelay)
	at := int64(0)
	for _, t := range targets {
		end := max(t.Workload.ExpectedEnd+wait+1, c.snap.Now)
		if at == 0 || end < at {
			at = end
		}
	}
	return at
}

// lateCap bounds, in patiences, how long past its estimate a late target
// is still waited for when workloads are late together: a job that hung
// then holds a preemptor up for at most this much longer.
const lateCap = 4

// lateTogetherMin is how many running workloads with an estimate there
// must be before their lateness is read as shared (with fewer, one late
// job is as likely hung as held up).
const lateTogetherMin = 8

// lateTogether reports whether at least half of the running workloads
// with an estimated end are past it by more than the patience. It is
// computed once per cycle, at the first late target.
func (c *cycle) lateTogether() bool {
	if c.late != lateUnknown {
		return c.late == lateYes
	}
	now, patience := c.snap.Now, int64(c.opts.Patience)
	var estimated, late int
	c.snap.EachAdmitted(func(a *state.Admitted) bool {
		if a.ExpectedEnd != 0 {
			estimated++
			if now-a.ExpectedEnd > patience {
				late++
			}
		}
		return true
	})
	c.late = lateNo
	if estimated >= lateTogetherMin && 2*late >= estimated {
		c.late = lateYes
	}
	return c.late == lateYes
}

// lateness caches lateTogether for a cycle.
type lateness uint8

const (
	lateUnknown lateness = iota
	lateNo
	lateYes
)

// findVictims searches victims for the head with the given assignment.
func (c *cycle) findVictims(cur *cursor, w *workload.Info, asg *flavors.Assignment) ([]preemption.Target, bool) {
	finder := c.victimFinder() // makes c.future
	p := &preemption.Preemptor{Info: w, CQ: cur.cq, Node: c.future.ClusterQueue(cur.name), Usage: asg.Usage, Contested: asg.PreemptFor}
	if w.Preempting && w.Hint != nil {
		p.Earlier = w.Hint.Victims
	}
	return finder.Find(p)
}

// holdUnreclaimable keeps, for the rest of the cycle, quota a head that found
// no victims is entitled to but cannot always reclaim (its queue does not
// reclaim from any priority): what it needs up to its nominal quota, or up to
// nominal + borrowingLimit when it borrows. Workloads processed later cannot
// take it, so the head is not overtaken by lower-priority ones.
func (c *cycle) holdUnreclaimable(cur *cursor, asg *flavors.Assignment) resources.FlavorResourceQuantities {
	if cur.cq.Preemption.ReclaimWithinCohort == kueue.PreemptionPolicyAny {
		return nil
	}
	hold := resources.FlavorResourceQuantities{}
	for fr, need := range asg.Usage {
		q, _ := cur.node.Quota(fr)
		used := cur.node.Usage(fr)
		limit := q.Nominal
		if asg.Borrowing() {
			limit = resources.Add(q.Nominal, q.BorrowingLimit)
		}
		if amount := min(need, max(0, resources.Sub(limit, used))); amount > 0 {
			hold[fr] = amount
		}
	}
	if len(hold) == 0 {
		return nil
	}
	c.addUsage(cur, hold)
	return hold
}

func (c *cycle) admitHead(cur *cursor) {
	w := cur.items[cur.pos]
	asg := cur.asg
	if msg, ok := c.placeTopologyOf(cur.cq, w, &asg); !ok {
		if c.preemptForTopology(cur, w, asg, msg) {
			return
		}
		// Topology capacity only shrinks within a cycle: later workloads
		// of the shape fail too (of no higher priority, when they could
		// have preempted).
		prio := noPriority
		if cur.cq.Preemption.WithinClusterQueue != kueue.PreemptionPolicyNever {
			prio = w.Priority
		}
		c.refuse(cur, w, Decision{Workload: w, Reason: TopologyPlacementFailed, Message: msg, Assignment: &asg}, prio)
		return
	}
	c.addUsage(cur, asg.Usage)
	c.decide(Decision{Workload: w, Admit: true, Assignment: &asg})
	c.result.Admitted++
	cur.pos++
}

func (c *cycle) decide(d Decision) { c.result.Decisions = append(c.result.Decisions, d) }

// needsQuota reports whether the workload requests some resource the queue
// covers (otherwise it needs no quota at all).
func needsQuota(cur *cursor, w *workload.Info) bool {
	for i := range w.Shape.PodSets {
		ps := &w.Shape.PodSets[i]
		for _, r := range ps.Resources {
			if ps.PerPod[r] > 0 && cur.cq.GroupFor(r) != nil {
				return true
			}
		}
	}
	return false
}

// noFreeQuota reports whether the queue can obtain nothing more of any
// (flavor, resource) it lists, as of the current cycle state.
func (c *cycle) noFreeQuota(cur *cursor) bool {
	if v := c.versions[cur.root]; cur.fullChecked && cur.fullVersion == v {
		return cur.full
	}
	cur.fullChecked, cur.fullVersion, cur.full = true, c.versions[cur.root], true
	for _, g := range cur.cq.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range g.Resources {
				if cur.node.Available(resources.FlavorResource{Flavor: f, Resource: r}) > 0 {
					cur.full = false
					return false
				}
			}
		}
	}
	return true
}

// precheck refuses workloads whose queue cannot admit them at all.
func (c *cycle) precheck(cur *cursor, w *workload.Info) (Decision, bool) {
	if cur.cq == nil || cur.node == nil {
		return Decision{Workload: w, Reason: ClusterQueueNotFound,
			Message: fmt.Sprintf("ClusterQueue %s doesn't exist", cur.name)}, false
	}
	if in, inactive := c.snap.ClusterQueueInactive(cur.name); inactive {
		return Decision{Workload: w, Reason: ClusterQueueInactive,
			Message: fmt.Sprintf("ClusterQueue %s is inactive: %s", cur.name, in.Message)}, false
	}
	if !c.snap.NamespaceAllowed(cur.cq, w.Key.Namespace) {
		return Decision{Workload: w, Reason: NamespaceMismatch,
			Message: fmt.Sprintf("the namespace %s doesn't match the namespaceSelector of ClusterQueue %s", w.Key.Namespace, cur.name)}, false
	}
	return Decision{}, true
}

// blockRest reports everything behind a StrictFIFO head that was not
// admitted as blocked, in one summary: those workloads are not evaluated.
// Workloads whose namespace the queue does not admit are refused for that
// (once per namespace when the candidates list their namespaces).
func (c *cycle) blockRest(cur *cursor, head *workload.Info) {
	rest := cur.items[cur.pos:]
	cur.pos = len(cur.items)
	if !c.namespacesAllowed(cur) {
		var kept []*workload.Info
		for _, w := range rest {
			if d, ok := c.precheck(cur, w); !ok {
				c.decide(d)
				continue
			}
			kept = append(kept, w)
		}
		rest = kept
	}
	if len(rest) > 0 {
		c.result.Blocked = append(c.result.Blocked, Blocked{ClusterQueue: cur.name, Head: head, Workloads: rest})
	}
}

// namespacesAllowed reports whether the queue admits every namespace of
// its candidates, when they are listed.
func (c *cycle) namespacesAllowed(cur *cursor) bool {
	if cur.namespaces == nil {
		return false
	}
	for _, ns := range cur.namespaces {
		if !c.snap.NamespaceAllowed(cur.cq, ns) {
			return false
		}
	}
	return true
}
