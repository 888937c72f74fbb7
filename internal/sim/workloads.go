package sim

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/resources"
)

// phase is where a workload is in its life, as the simulation knows it.
type phase int

const (
	waiting   phase = iota // not created yet, or pending
	admitting              // admission decided, write in flight
	running                // admission landed
	evicting               // eviction decided, write in flight
	done                   // finished
)

// admission is one stay of a workload in a ClusterQueue.
type admission struct {
	ClusterQueue string
	// Decided is when the admission was decided (its condition stamp),
	// Landed when its write landed, Started when its job noticed it and
	// started, Released when its quota went back.
	Decided, Landed, Started, Released time.Duration
}

// record follows one workload through the simulation.
type record struct {
	w     *Workload
	key   types.NamespacedName
	obj   *kueue.Workload
	phase phase
	// run counts admissions; events of an earlier run are stale.
	run        int
	usage      resources.FlavorResourceQuantities
	cq         kueue.ClusterQueueReference
	admissions []admission
	evictions  []string
	finished   time.Duration
	// pendingAdmission and pendingChecks are the admission being written.
	pendingAdmission *kueue.Admission
	pendingChecks    []kueue.AdmissionCheckReference
	// evictOnLanding is an eviction decided while the admission was being
	// written, sent when it lands.
	evictOnLanding *event
	// jobQueued: the workload waits in the job side's queue (jobside.go).
	jobQueued bool
}

// write stores a new version of the workload and shows it to the cache,
// as the informer would.
func (e *engine) write(r *record, obj *kueue.Workload) {
	obj.ResourceVersion = e.nextVersion()
	r.obj = obj
	e.c.UpsertWorkload(obj)
}

func (e *engine) arrive(ev *event) {
	r := e.recs[ev.key]
	w := r.w
	created := epoch.Add(w.Arrive - w.CreatedBefore).Truncate(time.Second) // the API server stamps seconds
	obj := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name, UID: types.UID(w.Namespace + "/" + w.Name),
			CreationTimestamp: metav1.NewTime(created), Generation: 1},
		Spec: kueue.WorkloadSpec{QueueName: w.Queue, PodSets: w.PodSets},
	}
	if w.Priority != 0 || w.PriorityClass == "" {
		obj.Spec.Priority = ptr.To(w.Priority)
	}
	if w.PriorityClass != "" {
		obj.Spec.PriorityClassRef = &kueue.PriorityClassRef{Kind: kueue.WorkloadPriorityClassKind, Name: w.PriorityClass}
	}
	if w.MaxExecution > 0 {
		obj.Spec.MaximumExecutionTimeSeconds = ptr.To(int32(w.MaxExecution / time.Second))
	}
	if w.Admission != nil {
		e.arriveRunning(r, obj)
		return
	}
	e.write(r, obj)
	e.logEvent("arrive", r.key, map[string]any{"queue": string(w.Queue), "class": w.Class})
}

// arriveRunning places a workload that holds its admission from the
// start, and schedules its end.
func (e *engine) arriveRunning(r *record, obj *kueue.Workload) {
	if _, known := e.c.ClusterQueue(r.w.Admission.ClusterQueue); !known {
		e.err = fmt.Errorf("workload %s: admitted in ClusterQueue %s, which the setup lacks", r.key, r.w.Admission.ClusterQueue)
		return
	}
	obj.Status = *apply.Reserve(obj, r.w.Admission, nil, e.stamp(e.now-r.w.RanFor))
	e.write(r, obj)
	a, ok := e.c.Admitted(r.key)
	if !ok {
		e.err = fmt.Errorf("workload %s: its admission in ClusterQueue %s does not hold (unknown queue or flavor?)", r.key, r.w.Admission.ClusterQueue)
		return
	}
	r.run, r.phase, r.cq, r.usage = 1, running, a.ClusterQueue, a.Usage
	r.admissions = append(r.admissions, admission{ClusterQueue: string(a.ClusterQueue), Decided: e.now, Landed: e.now, Started: e.now})
	e.usage.add(r.cq, r.usage)
	e.schedule(&event{at: e.now + r.w.Runtime, kind: evFinished, key: r.key, run: r.run})
	e.logEvent("running", r.key, map[string]any{"clusterQueue": string(a.ClusterQueue)})
}

// admitted lands an admission write: the workload holds its quota in the
// API, its job notices and starts, and finishes after its runtime.
func (e *engine) admitted(ev *event) {
	r := e.recs[ev.key]
	if r.phase != admitting || ev.run != r.run {
		return
	}
	obj := r.obj.DeepCopy()
	obj.Status = *apply.Reserve(r.obj, r.pendingAdmission, r.pendingChecks, e.stamp(ev.decided))
	e.write(r, obj)
	r.phase = running
	r.admissions[len(r.admissions)-1].Landed = e.now
	start := e.opts.Latency.land(e.now + e.sample(e.opts.Latency.at(e.now).Observe))
	r.admissions[len(r.admissions)-1].Started = start
	end := start + r.w.Runtime
	if e.opts.Latency.Jobs > 0 {
		e.schedule(&event{at: end, kind: evJobDue, key: r.key, run: r.run})
	} else {
		e.schedule(&event{at: end + e.sample(e.opts.Latency.at(end).Finish), kind: evFinished, key: r.key, run: r.run})
	}
	if ev := r.evictOnLanding; ev != nil {
		r.evictOnLanding = nil
		e.sendEviction(r, ev)
	}
}

// evicted lands an eviction: the workload has no job, so its quota goes
// back in the same write and it returns to its queue.
func (e *engine) evicted(ev *event) {
	r := e.recs[ev.key]
	if r.phase != evicting || ev.run != r.run {
		return
	}
	at := e.stamp(ev.decided)
	msg := "Preempted to accommodate a workload due to " + ev.reason
	st := apply.Evict(r.obj, kueue.WorkloadEvictedByPreemption, "", ev.reason, msg, at)
	next := r.obj.DeepCopy()
	next.Status = *st
	obj := r.obj.DeepCopy()
	obj.Status = *apply.ClearReservation(next, true, kueue.WorkloadEvictedByPreemption, msg, at)
	r.release(e.now)
	r.evictions = append(r.evictions, ev.reason)
	r.phase = waiting
	e.usage.remove(r.cq, r.usage)
	e.write(r, obj)
	e.logEvent("evicted", r.key, map[string]any{"reason": ev.reason, "clusterQueue": string(r.cq)})
}

// finished lands the job's Finished write: the quota goes back.
func (e *engine) finished(ev *event) {
	r := e.recs[ev.key]
	if (r.phase != running && r.phase != evicting) || ev.run != r.run {
		return
	}
	obj := r.obj.DeepCopy()
	meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: kueue.WorkloadFinishedSucceeded, Message: "done", LastTransitionTime: e.stamp(e.now)})
	r.release(e.now)
	r.phase = done
	r.finished = e.now
	e.usage.remove(r.cq, r.usage)
	e.write(r, obj)
	e.logEvent("finished", r.key, map[string]any{"clusterQueue": string(r.cq)})
}

// release closes the current admission.
func (r *record) release(at time.Duration) {
	if n := len(r.admissions); n > 0 && r.admissions[n-1].Released == 0 {
		r.admissions[n-1].Released = at
	}
}
