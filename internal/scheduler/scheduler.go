// Package scheduler runs the scheduling loop: after a start barrier (every
// informer handler delivered its initial list into the cache), it waits
// for something that could let a workload in, takes a snapshot, asks the
// pure core (internal/scheduling) for decisions and turns them into writes.
// It is the only place where decisions become writes. Wake-ups are
// coalesced: many events in a row make one cycle.
//
// Failures are contained (failures.go): a panic while deciding or acting
// on one workload sets that workload aside with a condition and an event
// while every other workload keeps being scheduled; an admission write the
// API server refuses for good (invalid, forbidden, denied by a webhook or
// a policy) is retried with a growing backoff and reported on the
// workload; any other failed write (a 5xx, a 429, a timeout, a conflict)
// undoes what was assumed and is retried after a per-workload backoff with
// jitter (backoff.go); cycles that make no progress slow down.
package scheduler

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/report"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// DecideFunc is the scheduling core's entry point (scheduling.Decide).
type DecideFunc func(*state.Snapshot, []workload.Queue, scheduling.Options) scheduling.Result

// Scheduler is a manager Runnable that needs leader election.
type Scheduler struct {
	Cache  *cache.Cache
	Client client.Client
	// APIReader reads from the API server, bypassing the informers; nil
	// reads through Client.
	APIReader client.Reader
	Writer    *apply.Writer
	Recorder  record.EventRecorder
	Options   scheduling.Options
	// Barrier blocks until the cache holds the initial objects.
	Barrier func(ctx context.Context) error
	// Writers is the number of parallel status writers (default 32).
	Writers int
	// WriteTimeout bounds each write (default 15 s): one the API server
	// does not answer fails and is retried after a backoff (backoff.go).
	WriteTimeout time.Duration
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// OnCycle, when set, is called after each cycle (tests).
	OnCycle func(CycleReport)
	// Decide replaces scheduling.Decide (tests inject failures with it).
	Decide DecideFunc
	// Labels labels workload metrics; nil records ClusterQueue series only.
	Labels *report.Labels
	// BlockAdmission (waitForPodsReady.blockAdmission) holds new
	// admissions while some admitted workload's pods are not ready.
	BlockAdmission bool

	pool     *apply.Pool
	log      logr.Logger
	pending  *pendingWrites
	locks    keyLocks
	refusals rejections
	retries  retries
	// prunedAt is when pruneGone last ran.
	prunedAt time.Time
	cycles   atomic.Uint64
	// spare is the memory of the last cycle's decisions, handed to the
	// next cycle's (scheduling.DecideInto).
	spare []scheduling.Decision
}

// CycleReport summarizes one cycle.
type CycleReport struct {
	Decisions, Admitted, Preempting int
	// SetAside counts workloads set aside because deciding them failed.
	SetAside int
	Duration time.Duration
}

// NeedLeaderElection: only the leader schedules.
func (s *Scheduler) NeedLeaderElection() bool { return true }

// Cycles returns how many scheduling cycles ran (each wake-up of the loop
// is one, whether or not some workload was a candidate).
func (s *Scheduler) Cycles() uint64 { return s.cycles.Load() }

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Start runs the loop until ctx ends.
func (s *Scheduler) Start(ctx context.Context) error {
	s.log = ctrl.Log.WithName("scheduler")
	if s.Barrier != nil {
		start := s.now()
		if err := s.Barrier(ctx); err != nil {
			return fmt.Errorf("scheduler start barrier: %w", err)
		}
		s.log.Info("initial state loaded", "took", s.now().Sub(start).String())
	}
	workers := s.Writers
	if workers <= 0 {
		workers = 32
	}
	s.pool = apply.NewPool(workers)
	defer s.pool.Close()
	s.pending = newPendingWrites(func(key types.NamespacedName, n pendingNote, at time.Time) {
		s.pool.Go(func() { s.sendPending(ctx, key, n, at) })
	}, s.now)
	pendingCtx, stopPending := context.WithCancel(ctx)
	pendingDone := make(chan struct{})
	go func() {
		defer close(pendingDone)
		s.pending.run(pendingCtx)
	}()
	// Runs before the writers close: nothing is sent to them afterwards.
	defer func() {
		stopPending()
		<-pendingDone
		s.pending.stop()
	}()
	s.log.Info("scheduler started")
	return s.loop(ctx)
}

// loop runs a cycle per wake-up, paced by scheduling.IdleDelay: a cycle
// that makes no progress (admits and evicts nothing) delays the next one a
// little more, unless quota was freed or a workload queued since; any
// progress resets the delay.
func (s *Scheduler) loop(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	idle := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.Cache.Wake():
		case <-timer.C:
		}
		if d := scheduling.IdleDelay(idle, s.Cache.TakeOpened()); d > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(d):
			}
		}
		if s.safeCycle(ctx) {
			idle = 0
		} else {
			idle++
		}
		timer.Reset(s.nextWake())
	}
}

// nextWake is when a backoff ends, or a minute from now: cycles are
// event-driven, the timer is a safety net.
func (s *Scheduler) nextWake() time.Duration {
	now := s.now()
	wait := time.Minute
	if next := s.Cache.NextRequeueAt(now.UnixNano()); next > 0 {
		wait = min(wait, time.Duration(next-now.UnixNano())+time.Millisecond)
	}
	return max(wait, time.Millisecond)
}

// safeCycle runs a cycle, recovering a panic so that scheduling goes on;
// it reports whether the cycle made progress.
func (s *Scheduler) safeCycle(ctx context.Context) (progress bool) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(fmt.Errorf("panic: %v", p), "scheduling cycle failed", "stack", string(debug.Stack()))
		}
	}()
	return s.cycle(ctx)
}

func (s *Scheduler) cycle(ctx context.Context) bool {
	s.cycles.Add(1)
	metrics.SchedulingCycle()
	start := s.now()
	s.pruneGone(start)
	snap, queues := s.Cache.Snapshot(start.UnixNano())
	queues = s.Cache.SkipIdle(snap, queues)
	if len(queues) == 0 {
		return false
	}
	res, setAside := s.decide(ctx, snap, queues, start)
	if setAside == 0 && len(res.Decisions)+len(res.Blocked) > 0 {
		// Not after a failure of the core: its trees were not decided.
		s.Cache.Settle(snap, queues, &res)
	}
	rep := CycleReport{Decisions: res.Workloads(), Admitted: res.Admitted, SetAside: setAside}
	blocked := s.BlockAdmission && !s.Cache.AllPodsReady()
	heldBack := false
	for i := range res.Decisions {
		d := &res.Decisions[i]
		switch {
		case d.Admit && blocked:
			rep.Admitted--
			heldBack = true
			s.writeWaiting(ctx, d.Workload, kueue.WorkloadReasonWaitingForPodsReady,
				func() string { return "Waiting for all admitted workloads to be in the PodsReady condition" }, false, start)
		case d.Admit:
			s.act(ctx, d.Workload, start, func() { s.admit(ctx, d, snap, start) })
			// Sequential admission: the next waits for this one's pods.
			blocked = s.BlockAdmission
		case len(d.Victims) > 0 || d.Reason == scheduling.WaitingForPreemptedWorkloads:
			rep.Preempting++
			s.act(ctx, d.Workload, start, func() { s.preempt(ctx, d, start) })
		default:
			s.act(ctx, d.Workload, start, func() { s.refused(ctx, d, snap, start) })
		}
	}
	for i := range res.Blocked {
		s.blocked(ctx, &res.Blocked[i], start)
	}
	if heldBack {
		// Refusals after a held-back admission counted its quota as taken.
		s.Cache.UnparkAll()
	}
	rep.Duration = s.now().Sub(start)
	result := metrics.AdmissionInadmissible
	if rep.Admitted > 0 {
		result = metrics.AdmissionSuccess
	}
	metrics.AdmissionAttempt(result, rep.Duration)
	if s.OnCycle != nil {
		s.OnCycle(rep)
	}
	// Nothing keeps a decision past its cycle: the writes sent to the pool
	// copy what they need.
	s.spare = res.Release()
	return rep.Admitted > 0 || rep.Preempting > 0
}
