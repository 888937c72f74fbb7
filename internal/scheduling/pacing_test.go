package scheduling

import (
	"testing"
	"time"
)

// Cycles without progress slow the loop down step by step, up to a bound;
// an opening (quota freed, a workload queued) lifts the pause.
func TestIdleDelay(t *testing.T) {
	for _, c := range []struct {
		n      int
		opened bool
		want   time.Duration
	}{
		{0, false, 0}, {2, false, 0}, {3, false, 5 * time.Millisecond}, {4, false, 10 * time.Millisecond},
		{8, false, MaxIdleDelay}, {1000, false, MaxIdleDelay}, {3, true, 0}, {1000, true, 0},
	} {
		if got := IdleDelay(c.n, c.opened); got != c.want {
			t.Errorf("IdleDelay(%d, %v) = %v, want %v", c.n, c.opened, got, c.want)
		}
	}
}
