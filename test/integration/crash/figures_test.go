package crash

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// figures are what a run prints at the end.
type figures struct {
	start                    time.Time
	faultPhase, drain, total time.Duration
	// leftAfterFaults: workloads not finished when the last fault was done.
	leftAfterFaults    int
	kills, leaderKills int
	// killPhases counts the kills by the writes seen in the second before
	// them (a kill may count under several); idleKills saw none.
	killPhases                [numSignals]int
	idleKills                 int
	apiRestarts, etcdRestarts int
	pauses                    int
	maxRestart                time.Duration
	// drops: connection drops; droppedConns: the connections they cut;
	// refusals: drops followed by refused connections, maxRefusal the
	// longest such spell.
	drops, droppedConns, refusals int
	maxRefusal                    time.Duration
	audits, auditRetries          int
	quiescentAudits               int
	// maxSettle: longest wait for a clean full audit with the flow paused.
	maxSettle                        time.Duration
	workloads, admissions, evictions int
	leaseTransitions                 int
	// unseen: workloads whose reservations the observer did not all see.
	unseen []string
}

func (h *harness) figures() string {
	f := &h.fig
	starts, exits, _ := h.rs.report()
	seen, _ := h.obs.report()
	calm, near, leaderChanges := h.rec.snapshot()
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, "  "+format+"\n", args...) }
	fmt.Fprintf(&b, "crash test figures (%s):\n", h.prof)
	line("time: %s in all: %s of faults, then %s for the last %d workloads to finish",
		f.total.Round(time.Second), f.faultPhase.Round(time.Second), f.drain.Round(time.Second), f.leftAfterFaults)
	line("SIGKILLs: %d (%d of the leader); in the second before: admissions %d, evictions %d, status writes %d, none %d",
		f.kills, f.leaderKills, f.killPhases[sigAdmission], f.killPhases[sigEviction], f.killPhases[sigStatus], f.idleKills)
	line("restarts: kube-apiserver %d, etcd %d (longest %s); leader paused past its lease (SIGSTOP %s): %d",
		f.apiRestarts, f.etcdRestarts, f.maxRestart.Round(time.Millisecond), pauseFor, f.pauses)
	line("dropped connections to kube-apiserver: %d drops cutting %d connections, %d followed by refused connections (longest %s)",
		f.drops, f.droppedConns, f.refusals, f.maxRefusal.Round(time.Millisecond))
	line("replicas: %d, %d process starts, %d exits by themselves (lease lost, control plane down or unreachable)",
		h.prof.replicas, starts, len(exits))
	line("leader changes: %d leases taken (Lease transitions: %d)", leaderChanges, f.leaseTransitions)
	line("recovery after a leader kill (admission measured when workloads waited): %s", calm)
	line("  same within %s after a kube-apiserver or etcd restart or dropped connections: %s", outageGrace, near)
	line("workloads: %d created, all finished; admissions %d (seen by the jobs: %d), evictions %d (seen: %d); status writes seen: %d",
		f.workloads, f.admissions, seen[sigAdmission], f.evictions, seen[sigEviction], seen[sigStatus])
	line("audits: %d run, all clean (%d strict after each fault, %d full with the flow paused, settled within %s at most); %d retried while the API was away",
		f.audits, h.prof.faults(), f.quiescentAudits, f.maxSettle.Round(time.Millisecond), f.auditRetries)
	if len(f.unseen) > 0 {
		// The observer's informer relists after the API server restarts,
		// and misses the states in between.
		line("workloads whose reservations were not all seen (a relist after a restart hides states): %d, e.g.\n      %s",
			len(f.unseen), strings.Join(f.unseen[:min(len(f.unseen), 3)], "\n      "))
	}
	line("runner calls retried: %d creations, %d finishes (conflicts or API away)", h.run.createErrors.Load(), h.run.finishErrors.Load())
	return b.String()
}

// recovery measures how long the system takes to admit again after the
// leader is killed: from the kill to the next lease taken, and to the next
// admission after that lease when workloads were waiting at the kill.
// Kills within outageGrace of a control-plane restart are measured apart:
// the other replica may then still be starting after losing its lease.
// A restart or a paused flow cancels the measurement under way, as they
// stop admissions for other reasons.
type recovery struct {
	mu sync.Mutex
	// killedAt: the last leader kill, zero once a new leader took the
	// lease; admitFrom: the kill the next admission is measured from.
	killedAt, admitFrom, leaderAt time.Time
	// near: the kill under measurement came soon after a restart.
	near          bool
	stats         [2]recoveryStats // calm, near a restart
	leaderChanges int
}

// recoveryStats sums up the measured recoveries of one kind.
type recoveryStats struct {
	maxToLeader, maxToAdmission, sumToAdmission time.Duration
	// worst is the kill behind maxToAdmission.
	worst time.Time
	n     int
}

func (s recoveryStats) String() string {
	if s.n == 0 {
		return fmt.Sprintf("new leader within %s at most", s.maxToLeader.Round(time.Millisecond))
	}
	return fmt.Sprintf("new leader within %s at most, next admission within %s at most (kill at %s), %s on average (%d measured)",
		s.maxToLeader.Round(time.Millisecond), s.maxToAdmission.Round(time.Millisecond), s.worst.Format("15:04:05.000"),
		(s.sumToAdmission / time.Duration(s.n)).Round(time.Millisecond), s.n)
}

func (r *recovery) leaderKilled(at time.Time, workWaiting, nearRestart bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killedAt, r.leaderAt, r.admitFrom, r.near = at, time.Time{}, time.Time{}, nearRestart
	if workWaiting {
		r.admitFrom = at
	}
}

func (r *recovery) bucket() *recoveryStats {
	if r.near {
		return &r.stats[1]
	}
	return &r.stats[0]
}

func (r *recovery) leaderTook(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leaderChanges++
	if !r.killedAt.IsZero() {
		b := r.bucket()
		b.maxToLeader = max(b.maxToLeader, at.Sub(r.killedAt))
		r.killedAt, r.leaderAt = time.Time{}, at
	}
}

func (r *recovery) admission(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.admitFrom.IsZero() || r.leaderAt.IsZero() || at.Before(r.leaderAt) {
		return
	}
	b, d := r.bucket(), at.Sub(r.admitFrom)
	if d > b.maxToAdmission {
		b.maxToAdmission, b.worst = d, r.admitFrom
	}
	b.sumToAdmission += d
	b.n++
	r.admitFrom = time.Time{}
}

func (r *recovery) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killedAt, r.admitFrom, r.leaderAt = time.Time{}, time.Time{}, time.Time{}
}

func (r *recovery) snapshot() (calm, near recoveryStats, leaderChanges int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats[0], r.stats[1], r.leaderChanges
}

// outages remembers when the control plane was restarting (or, in
// harness.drops, out of the replicas' reach), to tell an expected exit of
// a replica from an unexplained one.
type outages struct {
	mu      sync.Mutex
	windows [][2]time.Time // end is zero while ongoing
}

// outageGrace: how long after a restart a replica may still fail because
// of it (its caches resync, its lease renewals failed meanwhile).
const outageGrace = 30 * time.Second

func (o *outages) begin() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.windows = append(o.windows, [2]time.Time{time.Now()})
}

func (o *outages) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.windows[len(o.windows)-1][1] = time.Now()
}

// around reports whether at falls in an outage or its grace period.
func (o *outages) around(at time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, w := range o.windows {
		if !at.Before(w[0].Add(-time.Second)) && (w[1].IsZero() || at.Before(w[1].Add(outageGrace))) {
			return true
		}
	}
	return false
}
