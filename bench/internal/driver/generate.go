package driver

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Run starts the schedule now and returns once every workload finished,
// or after timeout. progress, when set, is called every few seconds.
func (d *Driver) Run(ctx context.Context, timeout time.Duration, progress func(finished, total int)) *Result {
	d.start = time.Now()
	genCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go d.generate(genCtx)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	total := len(d.opts.Plan.Workloads)
	for {
		select {
		case <-d.rec.done:
			// The watch can show the last Finished before the request that
			// set it has returned; let the write counts catch up.
			d.settle(ctx, settleTimeout)
			return d.Snapshot(d.lastFinish(), true)
		case <-deadline.C:
			return d.Snapshot(time.Now(), false)
		case <-ctx.Done():
			return d.Snapshot(time.Now(), false)
		case <-tick.C:
			if progress != nil {
				progress(d.rec.progress(), total)
			}
		}
	}
}

// settleTimeout bounds the wait for job steps in progress at the end.
const settleTimeout = 2 * time.Second

// settle waits until no job step is in progress, or timeout.
func (d *Driver) settle(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for d.busy.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

func (d *Driver) lastFinish() time.Time {
	d.rec.mu.Lock()
	defer d.rec.mu.Unlock()
	var last time.Time
	for _, r := range d.rec.records {
		if r.Finished.After(last) {
			last = r.Finished
		}
	}
	return last
}

// generate sends each planned workload to the creation pool at its due
// time.
func (d *Driver) generate(ctx context.Context) {
	jobs := make(chan int, d.opts.Workers)
	var wg sync.WaitGroup
	for range d.opts.Workers {
		wg.Go(func() {
			for i := range jobs {
				d.create(ctx, d.opts.Plan.Workloads[i])
			}
		})
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for i, w := range d.opts.Plan.Workloads {
		if wait := time.Until(d.start.Add(w.Due)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		select {
		case <-ctx.Done():
			return
		case jobs <- i:
		}
	}
}

// create sends one workload, retrying transient failures.
func (d *Driver) create(ctx context.Context, w scenario.Workload) {
	sent := time.Now()
	d.lag.add(sent.Sub(d.start.Add(w.Due)))
	for attempt := 0; ; attempt++ {
		err := d.client.Create(ctx, d.workload(w))
		if err == nil || apierrors.IsAlreadyExists(err) {
			d.writes.Creates.Add(1)
			d.rec.created(types.NamespacedName{Namespace: w.Queue, Name: w.Name}, sent, time.Now())
			return
		}
		if ctx.Err() != nil {
			return
		}
		d.writes.Errors.Add(1)
		if attempt == 10 {
			log.FromContext(ctx).Error(err, "giving up creating workload", "workload", w.Name, "namespace", w.Queue)
			return
		}
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
	}
}

// workload builds the Workload for a planned one.
func (d *Driver) workload(w scenario.Workload) *kueue.Workload { return w.WorkloadObject() }

// lagStats tracks how late creations start.
type lagStats struct {
	mu       sync.Mutex
	max, sum time.Duration
	n        int
}

func (l *lagStats) add(d time.Duration) {
	d = max(d, 0)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = max(l.max, d)
	l.sum += d
	l.n++
}

func (l *lagStats) get() (time.Duration, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return 0, 0
	}
	return l.max, l.sum / time.Duration(l.n)
}
