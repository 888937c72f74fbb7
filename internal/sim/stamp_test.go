package sim

import (
	"testing"
	"time"
)

// Conditions the simulator writes carry times to the second, as the API
// server keeps them: the cache measures runtimes from them, so the
// simulated manager sees runtimes in whole seconds, as it would live.
func TestConditionStampsAreWholeSeconds(t *testing.T) {
	e := &engine{}
	if got, want := e.stamp(1700*time.Millisecond).Time, epoch.Add(time.Second); !got.Equal(want) {
		t.Fatalf("stamp of 1.7 s is %v, want %v", got, want)
	}
	if got := e.clock(1700 * time.Millisecond).Time; !got.Equal(epoch.Add(1700 * time.Millisecond)) {
		t.Fatalf("clock of 1.7 s is %v, want the exact time", got)
	}
}
