// Package driver plays the users and the jobs of a benchmark run against
// an API server where a Kueue-compatible manager runs: it creates the
// ResourceFlavor, Cohorts, ClusterQueues and LocalQueues of a plan (and a
// topology scenario's Topology and Ready nodes), creates
// the Workloads on the plan's schedule, finishes each one its runtime after
// it is admitted, clears the reservation of an evicted one (as a job would
// once its pods are gone), and records every admission, eviction and
// ClusterQueue usage change it sees.
//
// It watches through informers (one list, then watch events) and writes
// through bounded pools of workers. Status changes are server-side applies
// under the kueue-admission field manager with the object's UID and
// resourceVersion as preconditions, the way Kueue's own scalability runner
// writes them.
package driver

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Labels the driver puts on what it creates.
const (
	ClassLabel     = scenario.ClassLabel
	RuntimeLabel   = scenario.RuntimeLabel
	DefaultFlavor  = "bench-flavor"
	DefaultWorkers = 32
)

// Options configure a driver.
type Options struct {
	// Config reaches the API server; QPS and burst are raised on a copy.
	Config *rest.Config
	Scheme *runtime.Scheme
	Plan   *scenario.Plan
	// Flavor is the name of the plain ResourceFlavor of a plan without a
	// flavor of its own (DefaultFlavor when empty); a topology scenario's
	// plan brings its flavor.
	Flavor string
	// Workers per pool (creations, job actions); DefaultWorkers when zero.
	Workers int
}

// defaults fills in the flavor (the plan's own, else Flavor or
// DefaultFlavor) and the workers.
func (o *Options) defaults() {
	if o.Flavor == "" {
		o.Flavor = DefaultFlavor
	}
	o.Flavor = o.Plan.ResourceFlavor(o.Flavor).Name
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
}

// Driver runs one plan.
type Driver struct {
	opts   Options
	client client.Client
	cache  crcache.Cache
	rec    *recorder
	queue  workqueue.TypedRateLimitingInterface[types.NamespacedName]
	writes WriteCounts
	// busy counts job steps in progress.
	busy  atomic.Int64
	lag   lagStats
	start time.Time
}

// WriteCounts are the driver's own API writes.
type WriteCounts struct {
	Creates, Finishes, Clears, Conflicts, Errors atomic.Int64
}

// New prepares a driver; Start connects it.
func New(opts Options) (*Driver, error) {
	opts.defaults()
	cfg := rest.CopyConfig(opts.Config)
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.UserAgent = "kuota-bench"
	c, err := client.New(cfg, client.Options{Scheme: opts.Scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	ours, err := labels.NewRequirement(ClassLabel, selection.Exists, nil)
	if err != nil {
		return nil, fmt.Errorf("building selector: %w", err)
	}
	cache, err := crcache.New(cfg, crcache.Options{Scheme: opts.Scheme, DefaultTransform: crcache.TransformStripManagedFields(),
		ByObject: map[client.Object]crcache.ByObject{
			&kueue.Workload{}:     {Label: labels.NewSelector().Add(*ours)},
			&kueue.ClusterQueue{}: {Label: labels.NewSelector().Add(*ours)},
		}})
	if err != nil {
		return nil, fmt.Errorf("creating informers: %w", err)
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](5*time.Millisecond, time.Second),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "bench-jobs"})
	return &Driver{opts: opts, client: c, cache: cache, rec: newRecorder(opts.Plan, opts.Flavor), queue: q}, nil
}

// Start runs the informers and the job workers until ctx ends, and
// returns once the informers have synced.
func (d *Driver) Start(ctx context.Context) error {
	wlInf, err := d.cache.GetInformer(ctx, &kueue.Workload{})
	if err != nil {
		return fmt.Errorf("workload informer: %w", err)
	}
	cqInf, err := d.cache.GetInformer(ctx, &kueue.ClusterQueue{})
	if err != nil {
		return fmt.Errorf("cluster queue informer: %w", err)
	}
	onWorkload := func(obj any) {
		if wl, ok := obj.(*kueue.Workload); ok {
			d.onWorkload(wl)
		}
	}
	onQueue := func(obj any) {
		if cq, ok := obj.(*kueue.ClusterQueue); ok {
			d.rec.observeQueue(cq, time.Now())
		}
	}
	if _, err := wlInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: onWorkload,
		UpdateFunc: func(_, n any) { onWorkload(n) }}); err != nil {
		return fmt.Errorf("workload handler: %w", err)
	}
	if _, err := cqInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: onQueue,
		UpdateFunc: func(_, n any) { onQueue(n) }}); err != nil {
		return fmt.Errorf("cluster queue handler: %w", err)
	}
	go func() { _ = d.cache.Start(ctx) }()
	if !d.cache.WaitForCacheSync(ctx) {
		return fmt.Errorf("informers did not sync")
	}
	for range d.opts.Workers {
		go d.jobWorker(ctx)
	}
	go func() {
		<-ctx.Done()
		d.queue.ShutDown()
	}()
	return nil
}

// onWorkload records a new version of a workload and schedules what its
// job does next.
func (d *Driver) onWorkload(wl *kueue.Workload) {
	now := time.Now()
	rec := d.rec.observe(wl, now)
	if rec == nil {
		return
	}
	key := types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}
	_, admittedAt, runtime := d.rec.jobView(key)
	switch act, left := Decide(wl, admittedAt, runtime, now); act {
	case Clear, Finish:
		d.queue.Add(key)
	case Wait:
		d.queue.AddAfter(key, left)
	}
}

// Result is what a run recorded.
type Result struct {
	// Start is when the schedule began (due times count from it); End is
	// when the last workload was seen finished, or when the run gave up.
	Start, End time.Time
	// Completed says whether every workload finished.
	Completed bool
	Records   []Record
	Events    []Event
	Queues    []QueueSeries
	// Driver's own writes.
	Creates, Finishes, Clears, Conflicts, Errors int64
	// MaxCreateLag and MeanCreateLag measure how late creations were sent
	// against their due time.
	MaxCreateLag, MeanCreateLag time.Duration
}

// Snapshot copies what was recorded so far.
func (d *Driver) Snapshot(end time.Time, completed bool) *Result {
	d.rec.mu.Lock()
	defer d.rec.mu.Unlock()
	res := &Result{Start: d.start, End: end, Completed: completed, Events: slices.Clone(d.rec.events),
		Creates: d.writes.Creates.Load(), Finishes: d.writes.Finishes.Load(), Clears: d.writes.Clears.Load(),
		Conflicts: d.writes.Conflicts.Load(), Errors: d.writes.Errors.Load()}
	res.MaxCreateLag, res.MeanCreateLag = d.lag.get()
	for _, w := range d.opts.Plan.Workloads {
		rec := d.rec.records[types.NamespacedName{Namespace: w.Queue, Name: w.Name}]
		c := *rec
		c.Admissions = slices.Clone(rec.Admissions)
		c.latest = nil
		res.Records = append(res.Records, c)
	}
	for _, q := range d.opts.Plan.Queues {
		s := *d.rec.queues[q.Name]
		s.Samples = slices.Clone(s.Samples)
		res.Queues = append(res.Queues, s)
	}
	return res
}
