package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// refreshEvery is the period of the live table.
const refreshEvery = time.Second

// createAttempts bounds the tries to create one Job.
const createAttempts = 3

// submission is the outcome of creating one Job of the stream.
type submission struct {
	job JobSpec
	uid types.UID
	err error
}

// stream submits the Jobs at their times and shows the queues every second
// until every Job has finished, the drain time is over or ctx ends; then
// it prints the summary.
func (r *run) stream(ctx context.Context, jobs []JobSpec) error {
	st := Stats(jobs)
	r.step("jobs", "%d jobs over %s (seed %d): %d low and %d high priority; %d to %d GPUs each, %d to %d waves of pods\n",
		st.Jobs, r.o.Stream.Window, r.o.Stream.Seed, st.Low, st.High, st.MinGPUs, st.MaxGPUs, st.MinWaves, st.MaxWaves)
	t := NewTracker()
	scr := &screen{out: r.o.Out, terminal: r.o.Terminal}
	start := time.Now()
	subs := make(chan submission, len(jobs))
	go submit(ctx, r.client, start, jobs, subs)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	updates := make(chan *kueue.Workload, 64)
	watchWorkloads(watchCtx, r.client, updates)
	deadline := time.NewTimer(r.o.Stream.Window + r.o.Drain)
	defer deadline.Stop()
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	var failed []string
	var endErr error
	finished := false
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-deadline.C:
			endErr = fmt.Errorf("not every Job finished within %s", r.o.Stream.Window+r.o.Drain)
			break loop
		case s, ok := <-subs:
			switch {
			case !ok:
				subs = nil
			case s.err != nil:
				failed = append(failed, fmt.Sprintf("%s: %v", s.job.key(), s.err))
			default:
				t.Submitted(s.job, s.uid)
			}
		case wl := <-updates:
			t.ObserveWorkloads([]kueue.Workload{*wl})
		case <-tick.C:
			r.refresh(ctx, t, scr, time.Since(start), len(jobs))
			if subs == nil && t.AllFinished() {
				finished = true
				break loop
			}
		}
	}
	if !finished && ctx.Err() == nil {
		r.refresh(ctx, t, scr, time.Since(start), len(jobs))
	}
	scr.done()
	s := t.Summary(CapacityGPUs())
	s.Stream, s.Total = time.Since(start), time.Since(r.start)
	if ctx.Err() != nil {
		r.printf("\nInterrupted.\n")
	}
	r.printf("\n%s\n", strings.Join(s.Lines(), "\n"))
	if len(failed) > 0 {
		r.printf("  %-12s %s\n", "not created", strings.Join(failed, "; "))
		endErr = errors.Join(endErr, fmt.Errorf("%d of %d Jobs could not be created", len(failed), len(jobs)))
	}
	return endErr
}

// refresh polls the ClusterQueues and the Workloads, feeds the tracker and
// shows a frame. A failed poll shows the last known state.
func (r *run) refresh(ctx context.Context, t *Tracker, scr *screen, elapsed time.Duration, total int) {
	var cqs kueue.ClusterQueueList
	if err := r.client.List(ctx, &cqs); err == nil {
		cqs.Items = slices.DeleteFunc(cqs.Items, func(cq kueue.ClusterQueue) bool { return !isTeamQueue(cq.Name) })
		t.ObserveQueues(cqs.Items)
		r.lastQueues = cqs.Items
	}
	for _, team := range Teams {
		var wls kueue.WorkloadList
		if err := r.client.List(ctx, &wls, client.InNamespace(team.Namespace)); err == nil {
			t.ObserveWorkloads(wls.Items)
		}
	}
	scr.show(BuildFrame(elapsed, total, r.lastQueues, t))
}

func isTeamQueue(name string) bool {
	return slices.ContainsFunc(Teams, func(t Team) bool { return t.ClusterQueue == name })
}

// submit creates each Job at its time and reports the outcome; it closes
// out when done or when ctx ends.
func submit(ctx context.Context, c client.Client, start time.Time, jobs []JobSpec, out chan<- submission) {
	defer close(out)
	for _, j := range jobs {
		if !sleepUntil(ctx, start.Add(j.At)) {
			return
		}
		obj := j.Job()
		err := create(ctx, c, obj)
		out <- submission{job: j, uid: obj.UID, err: err}
	}
}

// create creates obj, trying again after a transient failure.
func create(ctx context.Context, c client.Client, obj client.Object) error {
	var err error
	for attempt := range createAttempts {
		if attempt > 0 && !sleepUntil(ctx, time.Now().Add(500*time.Millisecond)) {
			return ctx.Err()
		}
		if err = c.Create(ctx, obj); err == nil {
			return nil
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			return err
		}
	}
	return err
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
