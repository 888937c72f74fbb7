package sim

import (
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/scheduling"
)

// With a job side of one worker taking 1 s a write, jobs that end together
// report their ends one at a time: quota frees a second apart, and the
// next workload is admitted that much later than with jobs reporting on
// their own.
func TestJobSideWorkersWriteEndsOneAtATime(t *testing.T) {
	trace := []Workload{
		{Namespace: "ns", Name: "a", Queue: "lq", Runtime: time.Second, PodSets: cpuPodSets("2")},
		{Namespace: "ns", Name: "b", Queue: "lq", Runtime: time.Second, PodSets: cpuPodSets("2")},
		{Namespace: "ns", Name: "c", Queue: "lq", Runtime: time.Second, PodSets: cpuPodSets("2"), Arrive: time.Millisecond},
		{Namespace: "ns", Name: "d", Queue: "lq", Runtime: time.Second, PodSets: cpuPodSets("2"), Arrive: time.Millisecond},
	}
	admittedAt := func(latency string) map[string]time.Duration {
		t.Helper()
		l, err := ParseLatency(latency)
		if err != nil {
			t.Fatal(err)
		}
		at := map[string]time.Duration{}
		if _, err := Run(oneQueue(), trace, Options{Latency: l, OnDecision: func(now time.Duration, d *scheduling.Decision) {
			if _, seen := at[d.Workload.Key.Name]; d.Admit && !seen {
				at[d.Workload.Key.Name] = now
			}
		}}); err != nil {
			t.Fatal(err)
		}
		return at
	}
	own := admittedAt("")
	if own["c"] != time.Second || own["d"] != time.Second {
		t.Fatalf("jobs reporting on their own: c and d admitted at %v and %v, want both at 1s", own["c"], own["d"])
	}
	queued := admittedAt("jobs=1,jobwrite=fixed:1s")
	if queued["c"] != 2*time.Second || queued["d"] != 3*time.Second {
		t.Fatalf("one worker, 1s a write: c and d admitted at %v and %v, want 2s and 3s", queued["c"], queued["d"])
	}
	if two := admittedAt("jobs=2,jobwrite=fixed:1s"); two["c"] != 2*time.Second || two["d"] != 2*time.Second {
		t.Fatalf("two workers: c and d admitted at %v and %v, want both at 2s", two["c"], two["d"])
	}
}

func TestParseJobSide(t *testing.T) {
	l, err := ParseLatency("admit=10ms,jobs=5,jobwrite=exp:40ms")
	if err != nil || l.Jobs != 5 || l.JobWrite.Mean() != 40*time.Millisecond {
		t.Fatalf("parsed %+v (%v)", l, err)
	}
	if back, err := ParseLatency(l.String()); err != nil || back.String() != l.String() {
		t.Fatalf("%q read back as %q (%v)", l.String(), back.String(), err)
	}
	for _, bad := range []string{"jobs=-1", "jobs=x", "jobs=100001", "admit=1ms;from=5s,jobs=2"} {
		if _, err := ParseLatency(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
