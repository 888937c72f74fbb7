package sim

import (
	"container/heap"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

type eventKind int

const (
	evArrive     eventKind = iota // a workload is created
	evAdmitted                    // an admission write lands
	evEvicted                     // an eviction write lands
	evFinished                    // a job's Finished write lands
	evCycle                       // a scheduling cycle runs
	evWake                        // a backoff ends
	evJobDue                      // a job's runtime is over (jobs=N: it joins the job side's queue)
	evJobWritten                  // a job side's worker wrote a Finished status
)

var eventNames = [...]string{"arrive", "admitted", "evicted", "finished", "cycle", "wake", "jobDue", "jobWritten"}

func (k eventKind) String() string { return eventNames[k] }

// event is one thing that happens at a virtual time. run ties an event to
// one admission of its workload: an event of an earlier run is stale.
type event struct {
	at   time.Duration
	seq  uint64
	kind eventKind
	key  types.NamespacedName
	run  int
	// reason is the preemption reason of an eviction.
	reason string
	// decided is when the write was decided (its condition stamp).
	decided time.Duration
}

// events is a min-heap by time, then by the order scheduled, so that a
// run is deterministic.
type events []*event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

func (e *engine) schedule(ev *event) {
	switch ev.kind {
	case evAdmitted, evEvicted, evFinished:
		ev.at = e.opts.Latency.land(ev.at)
	}
	e.seq++
	ev.seq = e.seq
	heap.Push(&e.queue, ev)
}

func (e *engine) next() *event {
	if len(e.queue) == 0 {
		return nil
	}
	return heap.Pop(&e.queue).(*event)
}
