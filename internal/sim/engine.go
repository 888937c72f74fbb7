package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/state"
)

// Options tune a simulation.
type Options struct {
	Latency    Latency
	Seed       uint64
	Scheduling scheduling.Options
	Lifecycle  lifecycle.Options
	// Events, when set, receives the event log, one JSON object a line.
	Events io.Writer
	// Deadline stops the simulation at this virtual time (0: when every
	// workload finished).
	Deadline time.Duration
	// OnDecision, when set, sees every decision of the scheduling core,
	// with the virtual time of its cycle. d is valid during the call only.
	OnDecision func(at time.Duration, d *scheduling.Decision)
	// Context, when set, stops the simulation once done (checked before
	// each event): Run returns its error.
	Context context.Context
	// FairAdmission, when set, turns admission fair sharing on for the
	// ClusterQueues whose admissionScope asks for it (as the
	// Configuration's admissionFairSharing does in the manager).
	FairAdmission *afs.Params
	// EvaluateAll decides every cohort tree in every cycle, as if none
	// were idle (cache.Cache.SkipIdle): slower, the same results; for
	// checking that skipping idle trees changes nothing.
	EvaluateAll bool
}

// epoch is the virtual clock's zero, for the objects' timestamps.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// maxCyclesPerInstant bounds the cycles run at one virtual instant (each
// admission wakes the scheduler again, as in the manager).
const maxCyclesPerInstant = 4

// engine is one simulation run.
type engine struct {
	opts   Options
	c      *cache.Cache
	rng    *rand.Rand
	queue  events
	seq    uint64
	now    time.Duration
	rv     uint64
	recs   map[types.NamespacedName]*record
	order  []*record
	usage  *usageMeter
	busy   time.Duration // the scheduler is busy until then
	cycle  bool          // a cycle is scheduled
	idle   int           // cycles in a row without progress (the loop's pacing)
	wakeAt time.Duration // the earliest backoff wake scheduled (0: none)
	cycles int
	// spare is the memory of the last cycle's decisions, for the next
	// (scheduling.DecideInto).
	spare []scheduling.Decision
	log   *json.Encoder
	err   error
	// jobs is the job side's queue and workers (Latency.Jobs > 0).
	jobs jobSide
}

// Run simulates the trace on the setup.
func Run(setup *Setup, trace []Workload, opts Options) (*Result, error) {
	if err := validate(trace); err != nil {
		return nil, err
	}
	e := &engine{opts: opts, c: cache.New(opts.Lifecycle), rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		recs: map[types.NamespacedName]*record{}}
	e.c.SetAdmissionFairSharing(opts.FairAdmission)
	if opts.Events != nil {
		e.log = json.NewEncoder(opts.Events)
	}
	usage, err := e.load(setup)
	if err != nil {
		return nil, err
	}
	e.usage = usage
	for i := range trace {
		w := &trace[i]
		r := &record{w: w, key: types.NamespacedName{Namespace: w.Namespace, Name: w.Name}}
		e.recs[r.key] = r
		e.order = append(e.order, r)
		e.schedule(&event{at: w.Arrive + w.SeenAfter, kind: evArrive, key: r.key})
	}
	start := time.Now()
	e.loop()
	if e.err != nil {
		return nil, e.err
	}
	return e.result(time.Since(start)), nil
}

// load puts the setup into the engine's cache and sets up the usage meter.
func (e *engine) load(s *Setup) (*usageMeter, error) {
	if err := LoadSetup(e.c, s); err != nil {
		return nil, err
	}
	meter := newUsageMeter()
	for _, obj := range s.ClusterQueues {
		cq, ok := e.c.ClusterQueue(kueue.ClusterQueueReference(obj.Name))
		if !ok {
			return nil, fmt.Errorf("ClusterQueue %s was not loaded", obj.Name)
		}
		meter.addQueue(cq, classOf(obj))
	}
	e.drainWake()
	return meter, nil
}

// LoadSetup puts a queue configuration into a cache, as the manager's
// informer handlers would, and marks the cache synced. Workloads are
// added afterwards (UpsertWorkload).
func LoadSetup(c *cache.Cache, s *Setup) error {
	for _, f := range s.Flavors {
		c.SetFlavor(state.NewFlavor(f))
	}
	loadTopology(c, s)
	for _, p := range s.Priorities {
		c.SetPriorityClass(p.Name, p.Value)
	}
	for _, co := range s.Cohorts {
		cohort, err := state.NewCohort(co)
		if err != nil {
			return err
		}
		c.SetCohort(cohort)
	}
	for name, active := range s.AdmissionChecks {
		c.SetAdmissionCheck(name, active, s.CheckControllers[name])
	}
	namespaces := map[string]bool{}
	for _, lq := range s.LocalQueues {
		namespaces[lq.Namespace] = true
	}
	for ns, labels := range s.Namespaces {
		c.SetNamespace(ns, labels)
		delete(namespaces, ns)
	}
	for ns := range namespaces {
		c.SetNamespace(ns, nil)
	}
	for _, obj := range s.ClusterQueues {
		cq, err := state.NewClusterQueue(obj)
		if err != nil {
			return err
		}
		c.SetClusterQueue(cq)
	}
	for _, lq := range s.LocalQueues {
		stop := kueue.None
		if lq.Spec.StopPolicy != nil {
			stop = *lq.Spec.StopPolicy
		}
		c.SetLocalQueue(cache.LocalQueueKey{Namespace: lq.Namespace, Name: kueue.LocalQueueName(lq.Name)}, lq.Spec.ClusterQueue, stop)
		c.SetLocalQueueFairSharing(lq)
	}
	c.MarkSynced()
	return nil
}

// loop processes events in time order; after each instant, a woken
// scheduler gets a cycle.
func (e *engine) loop() {
	for e.err == nil {
		if ctx := e.opts.Context; ctx != nil && ctx.Err() != nil {
			e.err = fmt.Errorf("simulation stopped at %s of virtual time: %w", e.now, context.Cause(ctx))
			return
		}
		ev := e.next()
		if ev == nil {
			return
		}
		if e.opts.Deadline > 0 && ev.at > e.opts.Deadline {
			e.now = e.opts.Deadline
			return
		}
		e.advance(ev.at)
		e.handle(ev)
		if e.woken() {
			e.scheduleCycle()
		}
	}
}

// advance moves the clock, integrating usage up to the new time.
func (e *engine) advance(t time.Duration) {
	if t < e.now {
		t = e.now
	}
	e.usage.advance(t)
	e.now = t
}

func (e *engine) handle(ev *event) {
	switch ev.kind {
	case evArrive:
		e.arrive(ev)
	case evAdmitted:
		e.admitted(ev)
	case evEvicted:
		e.evicted(ev)
	case evFinished:
		e.finished(ev)
	case evCycle:
		e.runCycles()
	case evJobDue:
		e.jobDue(ev)
	case evJobWritten:
		e.jobWritten(ev)
	case evWake:
		if e.wakeAt == ev.at {
			e.wakeAt = 0
		}
		e.scheduleCycle()
	}
}

// woken drains and reports the cache's wake-up of the scheduler.
func (e *engine) woken() bool {
	select {
	case <-e.c.Wake():
		return true
	default:
		return false
	}
}

func (e *engine) drainWake() { e.woken() }

func (e *engine) scheduleCycle() {
	if e.cycle {
		return
	}
	e.cycle = true
	// Paced as the manager's loop: after cycles without progress, a
	// little later unless quota was freed or a workload queued.
	delay := scheduling.IdleDelay(e.idle, e.c.TakeOpened())
	e.schedule(&event{at: max(e.now, e.busy) + delay, kind: evCycle})
}

// sample draws a latency.
func (e *engine) sample(d Dist) time.Duration { return d.Sample(e.rng) }

// clock is the virtual time as a wall-clock time.
func (e *engine) clock(t time.Duration) metav1.Time { return metav1.NewTime(epoch.Add(t)) }

// stamp is the virtual time as a condition's lastTransitionTime, which the
// API server keeps to the second: the manager reads runtimes and
// reservation times from those.
func (e *engine) stamp(t time.Duration) metav1.Time {
	return metav1.NewTime(e.clock(t).Truncate(time.Second))
}

// nextVersion returns a new resourceVersion.
func (e *engine) nextVersion() string {
	e.rv++
	return fmt.Sprint(e.rv)
}

// logEvent writes one line of the event log.
func (e *engine) logEvent(kind string, key types.NamespacedName, fields map[string]any) {
	if e.log == nil {
		return
	}
	line := map[string]any{"t": e.now.Seconds(), "event": kind, "workload": key.String()}
	for k, v := range fields {
		line[k] = v
	}
	if err := e.log.Encode(line); err != nil && e.err == nil {
		e.err = fmt.Errorf("writing the event log: %w", err)
	}
}
