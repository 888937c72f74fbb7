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
	maxRestart                time.Duration
	audits, auditRetries      int
	quiescentAudits           int
	// maxSettle: longest wait for a clean full audit with the flow paused.
	maxSettle                        time.Duration
	workloads, admissions, evictions int
	leaseTransitions                 int
}

func (h *harness) figures() string {
	f := &h.fig
	starts, exits, _ := h.rs.report()
	seen, _ := h.obs.report()
	rec := h.rec.snapshot()
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, "  "+format+"\n", args...) }
	fmt.Fprintf(&b, "crash test figures (%s):\n", h.prof)
	line("time: %s in all: %s of faults, then %s for the last %d workloads to finish",
		f.total.Round(time.Second), f.faultPhase.Round(time.Second), f.drain.Round(time.Second), f.leftAfterFaults)
	line("SIGKILLs: %d (%d of the leader); in the second before: admissions %d, evictions %d, status writes %d, none %d",
		f.kills, f.leaderKills, f.killPhases[sigAdmission], f.killPhases[sigEviction], f.killPhases[sigStatus], f.idleKills)
	line("restarts: kube-apiserver %d, etcd %d (longest %s)", f.apiRestarts, f.etcdRestarts, f.maxRestart.Round(time.Millisecond))
	line("replicas: %d, %d process starts, %d exits by themselves (lease lost or control plane down)",
		h.prof.replicas, starts, len(exits))
	line("leader changes: %d leases taken (Lease transitions: %d)", rec.leaderChanges, f.leaseTransitions)
	line("recovery after a leader kill: new leader within %s at most; next admission within %s at most, %s on average (%d measured)",
		rec.maxToLeader.Round(time.Millisecond), rec.maxToAdmission.Round(time.Millisecond), rec.meanToAdmission().Round(time.Millisecond), rec.n)
	line("workloads: %d created, all finished; admissions %d (seen by the jobs: %d), evictions %d (seen: %d); status writes seen: %d",
		f.workloads, f.admissions, seen[sigAdmission], f.evictions, seen[sigEviction], seen[sigStatus])
	line("audits: %d run, all clean (%d strict after each fault, %d full with the flow paused, settled within %s at most); %d retried while the API was away",
		f.audits, h.prof.kills+h.prof.apiRestarts+h.prof.etcdRestarts, f.quiescentAudits, f.maxSettle.Round(time.Millisecond), f.auditRetries)
	line("runner calls retried: %d creations, %d finishes (conflicts or API away)", h.run.createErrors.Load(), h.run.finishErrors.Load())
	return b.String()
}

// recovery measures how long the system takes to admit again after the
// leader is killed: to the next lease taken, and to the next admission
// after that lease. A kill before the system recovered from the previous
// one extends the same measurement. Restarts of the control plane and
// paused flow reset it, as they stop admissions for other reasons.
type recovery struct {
	mu                          sync.Mutex
	killedAt, leaderAt          time.Time
	maxToLeader, maxToAdmission time.Duration
	sumToAdmission              time.Duration
	n, leaderChanges            int
}

func (r *recovery) leaderKilled(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.killedAt.IsZero() {
		r.killedAt = at
	}
	r.leaderAt = time.Time{}
}

func (r *recovery) leaderTook(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leaderChanges++
	if !r.killedAt.IsZero() && r.leaderAt.IsZero() {
		r.leaderAt = at
		r.maxToLeader = max(r.maxToLeader, at.Sub(r.killedAt))
	}
}

func (r *recovery) admission(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.killedAt.IsZero() || r.leaderAt.IsZero() || at.Before(r.leaderAt) {
		return
	}
	d := at.Sub(r.killedAt)
	r.maxToAdmission = max(r.maxToAdmission, d)
	r.sumToAdmission += d
	r.n++
	r.killedAt, r.leaderAt = time.Time{}, time.Time{}
}

func (r *recovery) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killedAt, r.leaderAt = time.Time{}, time.Time{}
}

// recoverySnapshot is a copy of the measurements.
type recoverySnapshot struct {
	maxToLeader, maxToAdmission, sumToAdmission time.Duration
	n, leaderChanges                            int
}

func (r *recovery) snapshot() recoverySnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	return recoverySnapshot{r.maxToLeader, r.maxToAdmission, r.sumToAdmission, r.n, r.leaderChanges}
}

func (s recoverySnapshot) meanToAdmission() time.Duration {
	if s.n == 0 {
		return 0
	}
	return s.sumToAdmission / time.Duration(s.n)
}

// outages remembers when the control plane was restarting, to tell an
// expected exit of a replica from an unexplained one.
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
