package sim

import (
	"time"

	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
)

// runCycles runs the scheduling cycles of one instant: one, and another as
// long as the previous one admitted or evicted something and the cache
// woke the scheduler again (bounded).
func (e *engine) runCycles() {
	e.cycle = false
	for i := range maxCyclesPerInstant {
		if i > 0 {
			e.c.TakeOpened() // the manager's loop takes it before every cycle
		}
		progress := e.runCycle()
		if progress {
			e.idle = 0
		} else {
			e.idle++
		}
		if !progress || !e.woken() {
			break
		}
	}
	e.busy = e.now + e.sample(e.opts.Latency.at(e.now).Cycle)
	e.drainWake()
	if next := e.c.NextRequeueAt(e.clock(e.now).UnixNano()); next > 0 {
		t := time.Duration(next - epoch.UnixNano())
		if e.wakeAt == 0 || t < e.wakeAt {
			e.wakeAt = t
			e.schedule(&event{at: t, kind: evWake})
		}
	}
}

// runCycle is one cycle: snapshot, Decide, and the decisions applied as
// the manager's scheduler applies them. It reports whether it admitted or
// evicted anything.
func (e *engine) runCycle() bool {
	e.cycles++
	snap, queues := e.c.Snapshot(e.clock(e.now).UnixNano())
	if !e.opts.EvaluateAll {
		queues = e.c.SkipIdle(snap, queues)
	}
	if len(queues) == 0 {
		return false
	}
	res := scheduling.DecideInto(e.spare, snap, queues, e.opts.Scheduling)
	defer func() { e.spare = res.Release() }()
	if !e.opts.EvaluateAll {
		e.c.Settle(snap, queues, &res)
	}
	progress := false
	for i := range res.Decisions {
		d := &res.Decisions[i]
		if e.opts.OnDecision != nil {
			e.opts.OnDecision(e.now, d)
		}
		switch {
		case d.Admit:
			progress = e.admit(d, snap) || progress
		case len(d.Victims) > 0 || d.Reason == scheduling.WaitingForPreemptedWorkloads:
			progress = e.preempt(d) || progress
		default:
			e.c.ParkFor(d, snap)
		}
	}
	return progress
}

// admit assumes an admission and sends its write.
func (e *engine) admit(d *scheduling.Decision, snap *state.Snapshot) bool {
	w := d.Workload
	r := e.recs[w.Key]
	cq := snap.ClusterQueues[w.ClusterQueue]
	adm := scheduling.AdmissionOf(w.ClusterQueue, d.Assignment)
	checks := lifecycle.ApplicableChecks(cq, adm)
	a := &state.Admitted{Key: w.Key, UID: w.UID, ClusterQueue: w.ClusterQueue, LocalQueue: w.LocalQueue,
		Admitted: len(checks) == 0, Priority: w.Priority, QueueOrderTime: w.QueueOrderTime,
		Usage: d.Assignment.Usage, MinUsage: scheduling.MinUsage(w.Shape, d.Assignment), ReservedAt: e.clock(e.now).UnixNano()}
	if err := e.c.Assume(a, w.ResourceVersion); err != nil {
		return false
	}
	r.run++
	r.phase = admitting
	r.cq = w.ClusterQueue
	r.usage = d.Assignment.Usage
	r.pendingAdmission, r.pendingChecks = adm, checks
	r.admissions = append(r.admissions, admission{ClusterQueue: string(w.ClusterQueue), Decided: e.now})
	e.usage.add(r.cq, r.usage)
	e.schedule(&event{at: e.now + e.sample(e.opts.Latency.at(e.now).Admit), kind: evAdmitted, key: w.Key, run: r.run, decided: e.now})
	e.logEvent("admit", w.Key, map[string]any{"clusterQueue": string(w.ClusterQueue)})
	return true
}

// preempt marks the victims evicting and sends their evictions; the
// preemptor goes first in its queue with the assignment it preempted for.
func (e *engine) preempt(d *scheduling.Decision) bool {
	evicted := false
	for _, v := range d.Victims {
		if v.Workload.Evicting {
			continue
		}
		r := e.recs[v.Workload.Key]
		inFlight := r != nil && r.phase == admitting && r.evictOnLanding == nil
		if r == nil || (r.phase != running && !inFlight) {
			// It just ended: the next cycle decides again.
			continue
		}
		e.c.MarkEvicting(r.key, e.clock(e.now).UnixNano())
		evicted = true
		ev := &event{kind: evEvicted, key: r.key, run: r.run, reason: v.Reason, decided: e.now}
		if inFlight {
			// The manager writes one workload's status at a time: the
			// eviction is sent once the admission write lands.
			r.evictOnLanding = ev
			continue
		}
		e.sendEviction(r, ev)
	}
	preempting := *d.Workload
	preempting.Preempting = true
	preempting.Hint = d.Hint()
	e.c.Requeue(&preempting)
	return evicted
}

// sendEviction sends a decided eviction: it lands after the eviction
// latency.
func (e *engine) sendEviction(r *record, ev *event) {
	r.phase = evicting
	ev.at = e.now + e.sample(e.opts.Latency.at(e.now).Evict)
	e.schedule(ev)
}
