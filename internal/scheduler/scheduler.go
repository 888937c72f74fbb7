// Package scheduler runs the scheduling loop: after a start barrier (every
// informer synced and the initial objects loaded into the cache), it waits
// for something that could let a workload in, takes a snapshot, asks the
// pure core (internal/scheduling) for decisions and turns them into writes.
// It is the only place where decisions become writes. Wake-ups are
// coalesced: many events in a row make one cycle.
package scheduler

import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"runtime/debug"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	wlcontroller "github.com/kuota-dev/kuota/internal/controller/workload"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/scheduling"
)

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
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
	// OnCycle, when set, is called after each cycle (tests).
	OnCycle func(CycleReport)
	// Labels labels workload metrics; nil records ClusterQueue series only.
	Labels *wlcontroller.Labels
	// BlockAdmission (waitForPodsReady.blockAdmission) holds new
	// admissions while some admitted workload's pods are not ready.
	BlockAdmission bool

	pool    *apply.Pool
	log     logr.Logger
	pending *pendingWrites
	locks   keyLocks
}

// CycleReport summarizes one cycle.
type CycleReport struct {
	Decisions, Admitted, Preempting int
	Duration                        time.Duration
}

// NeedLeaderElection: only the leader schedules.
func (s *Scheduler) NeedLeaderElection() bool { return true }

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
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.Cache.Wake():
		case <-timer.C:
		}
		s.safeCycle(ctx)
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

// safeCycle runs a cycle, recovering a panic so one bad workload cannot
// stop scheduling.
func (s *Scheduler) safeCycle(ctx context.Context) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error(fmt.Errorf("panic: %v", p), "scheduling cycle failed", "stack", string(debug.Stack()))
		}
	}()
	s.cycle(ctx)
}

func (s *Scheduler) cycle(ctx context.Context) {
	start := s.now()
	snap, queues := s.Cache.Snapshot(start.UnixNano())
	if len(queues) == 0 {
		return
	}
	res := scheduling.Decide(snap, queues, s.Options)
	report := CycleReport{Decisions: len(res.Decisions), Admitted: res.Admitted}
	blocked := s.BlockAdmission && !s.Cache.AllPodsReady()
	heldBack := false
	for i := range res.Decisions {
		d := &res.Decisions[i]
		switch {
		case d.Admit && blocked:
			report.Admitted--
			heldBack = true
			s.writeWaiting(ctx, d.Workload, kueue.WorkloadReasonWaitingForPodsReady,
				func() string { return "Waiting for all admitted workloads to be in the PodsReady condition" }, false, start)
		case d.Admit:
			s.admit(ctx, d, snap, start)
			// Sequential admission: the next waits for this one's pods.
			blocked = s.BlockAdmission
		case len(d.Victims) > 0 || d.Reason == scheduling.WaitingForPreemptedWorkloads:
			report.Preempting++
			s.preempt(ctx, d, start)
		default:
			s.refused(ctx, d, snap, start)
		}
	}
	if heldBack {
		// Refusals after a held-back admission counted its quota as taken.
		s.Cache.UnparkAll()
	}
	report.Duration = s.now().Sub(start)
	result := metrics.AdmissionInadmissible
	if report.Admitted > 0 {
		result = metrics.AdmissionSuccess
	}
	metrics.AdmissionAttempt(result, report.Duration)
	if s.OnCycle != nil {
		s.OnCycle(report)
	}
}
