package scheduling

import "time"

// MaxIdleDelay bounds the pause before a cycle that follows cycles
// without progress.
const MaxIdleDelay = 100 * time.Millisecond

// IdleDelay is the pause before a scheduling cycle that follows n cycles
// in a row that admitted and evicted nothing, when nothing opened up
// since (no quota freed, no new workload queued): none for the first two,
// then 5 ms doubling up to MaxIdleDelay. A stream of events that change
// nothing cannot spin the loop, and freed quota is used at once. The
// manager's loop and the simulator pace cycles with it.
func IdleDelay(n int, opened bool) time.Duration {
	if n < 3 || opened {
		return 0
	}
	return min(MaxIdleDelay, 5*time.Millisecond<<min(n-3, 10))
}
