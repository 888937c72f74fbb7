package cache

import (
	"slices"
	"time"
)

// How long an eviction takes, from the scheduler's decision to the quota
// seen free, is what waiting for a victim is weighed against
// (state.Snapshot.EvictionDelay): a victim expected to end by itself
// sooner frees the same quota as soon, without losing its work. An idle
// API server and a batch Job that stops at once make it a fraction of a
// second; a loaded API server, or pods with a long termination grace
// period, make it tens of seconds. The cache notes when each eviction was
// decided (MarkEvicting) and, at the first snapshot after the workload
// stopped holding quota, how long that took.

// evictionSamples is how many recent delays are kept.
const evictionSamples = 16

// evictionWindow is how long a delay counts: once evictions are rare
// again, an old slow one no longer holds preemptors up.
const evictionWindow = 5 * time.Minute

type evictionSample struct {
	at    int64 // Unix nanoseconds, when the delay was seen
	delay time.Duration
}

// evictionDelays keeps the decision times of evictions in flight, the
// decisions whose quota was seen free since the last snapshot, and a ring
// of recent delays.
type evictionDelays struct {
	decided map[Key]int64
	freed   []int64
	ring    [evictionSamples]evictionSample
	n, next int
}

// decide notes an eviction decided at (Unix nanoseconds).
func (e *evictionDelays) decide(key Key, at int64) {
	if e.decided == nil {
		e.decided = map[Key]int64{}
	}
	e.decided[key] = at
}

// undo forgets an eviction that was not written.
func (e *evictionDelays) undo(key Key) { delete(e.decided, key) }

// released notes that key no longer holds quota.
func (e *evictionDelays) released(key Key) {
	if at, ok := e.decided[key]; ok {
		delete(e.decided, key)
		e.freed = append(e.freed, at)
	}
}

// median records the delays seen by now and returns the median of those
// seen within evictionWindow.
func (e *evictionDelays) median(now int64) time.Duration {
	for _, at := range e.freed {
		e.ring[e.next] = evictionSample{at: now, delay: max(0, time.Duration(now-at))}
		e.next = (e.next + 1) % evictionSamples
		e.n = min(e.n+1, evictionSamples)
	}
	e.freed = e.freed[:0]
	var recent [evictionSamples]time.Duration
	k := 0
	for _, s := range e.ring[:e.n] {
		if now-s.at <= int64(evictionWindow) {
			recent[k] = s.delay
			k++
		}
	}
	if k == 0 {
		return 0
	}
	slices.Sort(recent[:k])
	return recent[k/2]
}
