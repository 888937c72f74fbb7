package scheduler

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuota-dev/kuota/internal/intern"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Pending status writes are the bulk of what a scheduler could write: a
// workload is refused in many cycles before it is admitted, often for
// reasons that flip (waiting for quota, then for the workloads it
// preempted). Each status write costs the API server a server-side apply,
// and a write landing just before an admission makes the admission's
// precondition fail. So why a workload waits is written only once it has
// waited pendingGrace; what is learnt meanwhile is coalesced into one
// write; a reason is rewritten when it changes, a message with the same
// reason only every messageRefresh; what is due is dropped when the
// workload is admitted; and these writes, which only inform, share a rate
// limit (pendingRate) so that a storm of refusals cannot crowd out
// admissions and evictions at the API server. Under such a storm the
// reasons show up late, oldest first; nothing is lost.
const (
	pendingGrace   = time.Second
	messageRefresh = 5 * time.Minute
	pendingRate    = 10 // writes per second
	// maxPendingEntries bounds the memory of workloads deleted while
	// pending; past it the record starts afresh.
	maxPendingEntries = 200000
)

// pendingNote is one QuotaReserved=False to write. It keeps the
// workload's shape (shared by identical workloads) rather than the
// resource requests built from it: under a storm of refusals thousands of
// notes wait for the rate limit, and the built requests were a tenth of
// the manager's heap on the baseline benchmark.
type pendingNote struct {
	// uid is the object the note is about ("" for any).
	uid             types.UID
	reason, message string
	warn            bool
	shape           *workload.Shape
	// counts, for a growing slice, are its whole counts per PodSet.
	counts []int32
}

// pendingEntry is what is known of one workload (the object of that UID):
// what was last written and what waits in the queue.
type pendingEntry struct {
	uid       types.UID
	written   string
	writtenAt time.Time
	due       *pendingNote
}

type queuedNote struct {
	key   types.NamespacedName
	entry *pendingEntry
	at    time.Time
}

// pendingWrites defers, coalesces and paces the pending status writes.
type pendingWrites struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]*pendingEntry
	// queue holds the entries with a note due, in the order noted (so in
	// the order of their due times, the grace being constant).
	queue   []queuedNote
	stopped bool
	wake    chan struct{}
	send    func(types.NamespacedName, pendingNote, time.Time)
	now     func() time.Time
	// messages shares equal messages between notes: workloads of one
	// shape refused in one queue wait for the same reason, and under a
	// storm of refusals tens of thousands of notes wait for the rate limit.
	messages *intern.Table
}

func newPendingWrites(send func(types.NamespacedName, pendingNote, time.Time), now func() time.Time) *pendingWrites {
	return &pendingWrites{entries: map[types.NamespacedName]*pendingEntry{}, wake: make(chan struct{}, 1), send: send, now: now,
		messages: intern.New()}
}

// note records that the workload (the object of that UID) waits for
// reason; build gives the full note, and is called only when a write will
// be due. A workload created again under the same name starts afresh.
func (p *pendingWrites) note(key types.NamespacedName, uid types.UID, reason string, now time.Time, build func() pendingNote) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	e := p.entries[key]
	if e == nil || e.uid != uid {
		if len(p.entries) >= maxPendingEntries {
			clear(p.entries)
		}
		// A note queued for the object before is skipped (next).
		e = &pendingEntry{uid: uid}
		p.entries[key] = e
	}
	if e.due != nil {
		if e.due.reason != reason {
			e.due = p.build(build)
		}
		return
	}
	if e.written == reason && now.Sub(e.writtenAt) < messageRefresh {
		return
	}
	e.due = p.build(build)
	p.queue = append(p.queue, queuedNote{key: key, entry: e, at: now.Add(pendingGrace)})
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// build builds a note, its message shared with equal ones.
func (p *pendingWrites) build(build func() pendingNote) *pendingNote {
	n := build()
	n.message = p.messages.Share(n.message)
	return &n
}

// next pops the first queued note due at now: the note, or the time to
// wait for the next one (zero when the queue is empty).
func (p *pendingWrites) next(now time.Time) (types.NamespacedName, *pendingNote, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.queue) > 0 {
		q := p.queue[0]
		if wait := q.at.Sub(now); wait > 0 {
			return types.NamespacedName{}, nil, wait
		}
		p.queue[0] = queuedNote{}
		p.queue = p.queue[1:]
		e := q.entry
		if p.stopped || p.entries[q.key] != e || e.due == nil {
			continue // admitted, deleted or superseded meanwhile
		}
		n := e.due
		e.due = nil
		return q.key, n, 0
	}
	return types.NamespacedName{}, nil, 0
}

// run sends the notes as they come due, at most pendingRate a second,
// until ctx ends.
func (p *pendingWrites) run(ctx context.Context) {
	limiter := rate.NewLimiter(pendingRate, pendingRate)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := p.now()
		key, n, wait := p.next(now)
		if n != nil {
			if limiter.Wait(ctx) != nil {
				return
			}
			p.send(key, *n, now)
			continue
		}
		if wait <= 0 {
			wait = time.Hour
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// written records that a note was written: a note of the same reason is
// not due again before messageRefresh. Only a successful write counts, so
// a failed one is written again at the next refusal.
func (p *pendingWrites) written(key types.NamespacedName, reason string, at time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[key]; e != nil {
		e.written, e.writtenAt = reason, at
	}
}

// forget drops the workload's record: it was admitted, or went away.
func (p *pendingWrites) forget(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.entries, key)
}

// prune drops the records of the workloads unrecorded names (by key and
// UID): deleted, finished, or created again since. Their notes are due no
// more.
func (p *pendingWrites) prune(unrecorded unrecordedFunc) {
	pruneByUID(&p.mu, &p.entries, func(e *pendingEntry) types.UID { return e.uid }, unrecorded)
}

// stop drops what is due and refuses new notes.
func (p *pendingWrites) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	clear(p.entries)
	p.queue = nil
}
