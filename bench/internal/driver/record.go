package driver

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Event kinds in the run's log.
const (
	EventCreated  = "created"
	EventAdmitted = "admitted"
	EventEvicted  = "evicted"
	EventReleased = "released"
	EventFinished = "finished"
)

// Event is one entry of the run's log: a workload was created, admitted,
// evicted, gave its quota back, or finished, as the harness saw it.
type Event struct {
	At           time.Time `json:"at"`
	Kind         string    `json:"kind"`
	Namespace    string    `json:"namespace"`
	Name         string    `json:"name"`
	Queue        string    `json:"queue"`
	ClusterQueue string    `json:"clusterQueue,omitempty"`
	Class        string    `json:"class"`
	Detail       string    `json:"detail,omitempty"`
	RequestMilli int64     `json:"requestMilli"`
}

// Admission is one admission of a workload.
type Admission struct {
	ClusterQueue string
	// Observed is when the harness saw Admitted=True.
	Observed time.Time
	// Stamped is the Admitted condition's lastTransitionTime (1 s resolution).
	Stamped time.Time
	// Released is when the harness saw the workload stop holding quota
	// (finished, or its reservation cleared); zero while it holds it.
	Released time.Time
}

// Record is what the harness knows about one workload.
type Record struct {
	Plan scenario.Workload
	// CreateSent and Created frame the create request.
	CreateSent, Created time.Time
	// CreationTimestamp is the API server's stamp (1 s resolution).
	CreationTimestamp time.Time
	// FirstSeen is when the harness's watch first brought the workload.
	FirstSeen time.Time
	// FinishSent and FinishDone frame the harness's Finished write (zero
	// if another write finished it).
	FinishSent, FinishDone time.Time
	Admissions             []Admission
	Evictions              int
	// EvictionReasons holds, per eviction, its reason: the Preempted
	// condition's reason (InClusterQueue, InCohortReclamation, ...) for a
	// preemption, else the Evicted condition's.
	EvictionReasons []string
	// EvictionsAfterFinish counts the evictions that came when the
	// workload had already finished (included in Evictions).
	EvictionsAfterFinish int
	// Finished is when the harness saw Finished=True.
	Finished time.Time
	// FinalAdmittedStamp is the Admitted condition's lastTransitionTime on
	// the finished object: what Kueue's runner reads.
	FinalAdmittedStamp time.Time

	latest       *kueue.Workload
	evictedSeen  bool
	requestMilli int64
}

func (r *Record) open() *Admission {
	if n := len(r.Admissions); n > 0 && r.Admissions[n-1].Released.IsZero() {
		return &r.Admissions[n-1]
	}
	return nil
}

// UsageSample is a ClusterQueue's published usage from some instant on.
type UsageSample struct {
	At    time.Time
	Milli int64
}

// QueueSeries is what a ClusterQueue's status said over time.
type QueueSeries struct {
	Name, Class, Cohort string
	NominalMilli        int64
	Active              bool
	Samples             []UsageSample
}

// recorder keeps the records; event handlers and workers share it.
type recorder struct {
	mu       sync.Mutex
	flavor   string
	records  map[types.NamespacedName]*Record
	queues   map[string]*QueueSeries
	events   []Event
	finished int
	done     chan struct{}
}

func newRecorder(plan *scenario.Plan, flavor string) *recorder {
	r := &recorder{flavor: flavor, records: make(map[types.NamespacedName]*Record, len(plan.Workloads)),
		queues: map[string]*QueueSeries{}, done: make(chan struct{})}
	for _, w := range plan.Workloads {
		r.records[types.NamespacedName{Namespace: w.Queue, Name: w.Name}] = &Record{Plan: w, requestMilli: w.TotalMilli()}
	}
	for _, q := range plan.Queues {
		r.queues[q.Name] = &QueueSeries{Name: q.Name, Class: q.Class, Cohort: q.Cohort, NominalMilli: q.Nominal.MilliValue()}
	}
	if len(plan.Workloads) == 0 {
		close(r.done)
	}
	return r
}

func (r *recorder) logLocked(at time.Time, kind string, rec *Record, cq, detail string) {
	r.events = append(r.events, Event{At: at, Kind: kind, Namespace: rec.Plan.Queue, Name: rec.Plan.Name, Queue: rec.Plan.Queue,
		ClusterQueue: cq, Class: rec.Plan.Class, Detail: detail, RequestMilli: rec.requestMilli})
}

// created notes a create request.
func (r *recorder) created(key types.NamespacedName, sent, done time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.records[key]; rec != nil {
		rec.CreateSent, rec.Created = sent, done
		r.logLocked(done, EventCreated, rec, "", "")
	}
}

// finishWritten notes the harness's Finished write of a workload.
func (r *recorder) finishWritten(key types.NamespacedName, sent, done time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec := r.records[key]; rec != nil {
		rec.FinishSent, rec.FinishDone = sent, done
	}
}

// observe records what a new version of a workload shows and returns its
// record, or nil for a workload the run did not create.
func (r *recorder) observe(wl *kueue.Workload, now time.Time) *Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.records[types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}]
	if rec == nil {
		return nil
	}
	rec.latest = wl
	if rec.FirstSeen.IsZero() {
		rec.FirstSeen = now
	}
	rec.CreationTimestamp = wl.CreationTimestamp.Time
	conds := wl.Status.Conditions
	admitted := meta.FindStatusCondition(conds, kueue.WorkloadAdmitted)
	isAdmitted := admitted != nil && admitted.Status == "True"
	finished := meta.IsStatusConditionTrue(conds, kueue.WorkloadFinished)
	if a := rec.open(); a != nil && (!isAdmitted || finished || !admitted.LastTransitionTime.Time.Equal(a.Stamped)) {
		a.Released = now
		r.logLocked(now, EventReleased, rec, a.ClusterQueue, "")
	}
	if isAdmitted && !finished && rec.open() == nil {
		cq := ""
		if wl.Status.Admission != nil {
			cq = string(wl.Status.Admission.ClusterQueue)
		}
		rec.Admissions = append(rec.Admissions, Admission{ClusterQueue: cq, Observed: now, Stamped: admitted.LastTransitionTime.Time})
		r.logLocked(now, EventAdmitted, rec, cq, "")
	}
	evicted := meta.FindStatusCondition(conds, kueue.WorkloadEvicted)
	isEvicted := evicted != nil && evicted.Status == "True"
	if isEvicted && !rec.evictedSeen {
		rec.Evictions++
		reason := evicted.Reason
		if p := meta.FindStatusCondition(conds, kueue.WorkloadPreempted); p != nil && p.Status == "True" && reason == kueue.WorkloadEvictedByPreemption {
			reason = p.Reason
		}
		rec.EvictionReasons = append(rec.EvictionReasons, reason)
		if finished {
			rec.EvictionsAfterFinish++
		}
		cq := ""
		if wl.Status.Admission != nil {
			cq = string(wl.Status.Admission.ClusterQueue)
		}
		r.logLocked(now, EventEvicted, rec, cq, evicted.Reason)
	}
	rec.evictedSeen = isEvicted
	if finished && rec.Finished.IsZero() {
		rec.Finished = now
		if isAdmitted {
			rec.FinalAdmittedStamp = admitted.LastTransitionTime.Time
		}
		r.logLocked(now, EventFinished, rec, "", "")
		r.finished++
		if r.finished == len(r.records) {
			close(r.done)
		}
	}
	return rec
}

// jobView returns what the job side needs to decide about a workload.
func (r *recorder) jobView(key types.NamespacedName) (wl *kueue.Workload, admittedAt time.Time, runtime time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.records[key]
	if rec == nil || rec.latest == nil {
		return nil, time.Time{}, 0
	}
	if a := rec.open(); a != nil {
		admittedAt = a.Observed
	}
	return rec.latest, admittedAt, rec.Plan.Runtime
}

// observeQueue records a ClusterQueue's published usage of the flavor's CPU.
func (r *recorder) observeQueue(cq *kueue.ClusterQueue, now time.Time) {
	var milli int64
	for _, fu := range cq.Status.FlavorsUsage {
		if string(fu.Name) != r.flavor {
			continue
		}
		for _, ru := range fu.Resources {
			if ru.Name == corev1.ResourceCPU {
				milli = ru.Total.MilliValue()
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.queues[cq.Name]
	if q == nil {
		return
	}
	q.Active = meta.IsStatusConditionTrue(cq.Status.Conditions, kueue.ClusterQueueActive)
	if n := len(q.Samples); n == 0 || q.Samples[n-1].Milli != milli {
		q.Samples = append(q.Samples, UsageSample{At: now, Milli: milli})
	}
}

// inactiveQueues counts the ClusterQueues not yet Active.
func (r *recorder) inactiveQueues() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, q := range r.queues {
		if !q.Active {
			n++
		}
	}
	return n
}

// progress returns how many workloads finished.
func (r *recorder) progress() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finished
}
