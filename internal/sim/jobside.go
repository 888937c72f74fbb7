package sim

import (
	"k8s.io/apimachinery/pkg/types"
)

// The job side with a fixed number of workers (latency jobs=N,
// jobwrite=DIST) models a job controller that reports ends through one
// work queue, as Kueue's scalability runner does (5 workers): a job whose
// runtime is over joins a FIFO queue, and each of N workers writes one
// Finished status at a time, holding the worker for a jobwrite sample.
// Ends then come late when many jobs end together, and the manager learns
// runtimes that include the wait in the queue. Evictions do not go
// through it: the workloads of a scenario have no job, so the manager
// releases their quota in the eviction's own write. Without jobs= (0) a
// job reports its end on its own, after the finish latency.

// jobSide is the queue and the workers' state.
type jobSide struct {
	queue []types.NamespacedName
	head  int
	busy  int
}

// jobDue puts a workload whose runtime is over in the queue.
func (e *engine) jobDue(ev *event) {
	r := e.recs[ev.key]
	if r.phase != running || ev.run != r.run || r.jobQueued {
		return
	}
	r.jobQueued = true
	e.jobs.queue = append(e.jobs.queue, r.key)
	e.startJobWrites()
}

// startJobWrites hands queued workloads to idle workers. A workload that
// is no longer running (evicted meanwhile) costs no write.
func (e *engine) startJobWrites() {
	for e.jobs.busy < e.opts.Latency.Jobs && e.jobs.head < len(e.jobs.queue) {
		key := e.jobs.queue[e.jobs.head]
		e.jobs.head++
		r := e.recs[key]
		r.jobQueued = false
		if r.phase != running {
			continue
		}
		e.jobs.busy++
		e.schedule(&event{at: e.now + e.sample(e.opts.Latency.at(e.now).JobWrite), kind: evJobWritten, key: key, run: r.run})
	}
	if e.jobs.head == len(e.jobs.queue) {
		e.jobs.queue, e.jobs.head = e.jobs.queue[:0], 0
	}
}

// jobWritten ends a worker's write: the Finished status reaches the
// manager after the finish latency, and the worker takes the next one.
func (e *engine) jobWritten(ev *event) {
	e.jobs.busy--
	e.schedule(&event{at: e.now + e.sample(e.opts.Latency.at(e.now).Finish), kind: evFinished, key: ev.key, run: ev.run})
	e.startJobWrites()
}
