package demo

import (
	"reflect"
	"strings"
	"testing"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestWaits(t *testing.T) {
	var w Waits
	if w.Mean() != 0 {
		t.Errorf("empty mean %s", w.Mean())
	}
	for _, d := range []time.Duration{time.Second, 5 * time.Second, -2 * time.Second, 6 * time.Second} {
		w.add(d)
	}
	if w.Count != 4 || w.Total != 12*time.Second || w.Max != 6*time.Second || w.Mean() != 3*time.Second {
		t.Errorf("waits %+v, mean %s", w, w.Mean())
	}
}

// summaryTracker saw three Jobs: low waited 3s and finished after a
// preemption, high waited 1s and finished, late was never admitted.
func summaryTracker() *Tracker {
	tr := tracked()
	tr.Submitted(JobSpec{Name: "late", Team: TeamA, Priority: PriorityLow, Parallelism: 1, Completions: 1, GPUsPerPod: 1}, "job-late")
	low := workload("wl-low", "job-low", "team-a", 0)
	low = withCondition(low, kueue.WorkloadAdmitted, "Admitted", 3*time.Second)
	low = withCondition(low, kueue.WorkloadPreempted, kueue.InClusterQueueReason, 4*time.Second)
	low = withCondition(low, kueue.WorkloadFinished, "Succeeded", 9*time.Second)
	low = withPreemptions(low, 1)
	high := workload("wl-high", "job-high", "team-b", 2*time.Second)
	high = withCondition(high, kueue.WorkloadAdmitted, "Admitted", 3*time.Second)
	high = withCondition(high, kueue.WorkloadFinished, "Succeeded", 5*time.Second)
	late := workload("wl-late", "job-late", "team-a", 8*time.Second)
	tr.ObserveWorkloads([]kueue.Workload{low, high, late})
	tr.ObserveQueues([]kueue.ClusterQueue{
		queue("team-a", 1, 1, map[string]int64{"a100": 12}, map[string]int64{"a100": 4}),
		queue("team-b", 0, 1, map[string]int64{"v100": 8}, nil),
	})
	return tr
}

func TestSummary(t *testing.T) {
	s := summaryTracker().Summary(32)
	if s.Submitted != 3 || s.Finished != 2 || !reflect.DeepEqual(s.Unfinished, []string{"team-a/late"}) {
		t.Errorf("submitted %d finished %d unfinished %v", s.Submitted, s.Finished, s.Unfinished)
	}
	if s.All != (Waits{Count: 2, Total: 4 * time.Second, Max: 3 * time.Second}) {
		t.Errorf("all waits %+v", s.All)
	}
	want := map[string]Waits{
		PriorityLow:  {Count: 1, Total: 3 * time.Second, Max: 3 * time.Second},
		PriorityHigh: {Count: 1, Total: time.Second, Max: time.Second},
	}
	if !reflect.DeepEqual(s.ByPriority, want) {
		t.Errorf("waits by priority %+v", s.ByPriority)
	}
	if s.Preemptions != (Preemptions{Total: 1, InQueue: 1}) || s.PeakGPUs != 20 || s.CapacityGPUs != 32 {
		t.Errorf("preemptions %+v, peak %d of %d", s.Preemptions, s.PeakGPUs, s.CapacityGPUs)
	}
}

func TestSummaryLines(t *testing.T) {
	s := summaryTracker().Summary(32)
	s.Stream, s.Total = 84*time.Second, 95*time.Second
	want := `Summary
  jobs         3 submitted, 2 finished
               not finished: team-a/late
  wait         mean 2.0s, max 3.0s from creation to admission
               high priority mean 1.0s, max 1.0s (1 job); low priority mean 3.0s, max 3.0s (1 job)
  preemptions  1: 1 by a higher-priority job of the same team
  GPUs         peak 20 of 32 in use; most borrowed at once: team-a 4, team-b 0
  elapsed      1m35s in all, 1m24s from the first job to the end`
	if got := strings.Join(s.Lines(), "\n"); got != want {
		t.Errorf("Lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestSummaryCapsUnfinished(t *testing.T) {
	s := Summary{Unfinished: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}}
	if got := s.Lines()[2]; !strings.HasSuffix(got, "not finished: a, b, c, d, e, f, g, h and 2 more") {
		t.Errorf("line %q", got)
	}
}

func TestPreemptionsDescribe(t *testing.T) {
	tests := map[Preemptions]string{
		{}:                                 "none",
		{Total: 3, InQueue: 1, Reclaim: 2}: "3: 1 by a higher-priority job of the same team, 2 to give a team back the quota it lent",
		{Total: 2, Reclaim: 1, Other: 1}:   "2: 1 to give a team back the quota it lent, 1 not seen in detail",
	}
	for p, want := range tests {
		if got := p.describe(); got != want {
			t.Errorf("%+v.describe() = %q, want %q", p, got, want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0.0s", 1500 * time.Millisecond: "1.5s", 59 * time.Second: "59.0s", 95 * time.Second: "1m35s",
	} {
		if got := seconds(d); got != want {
			t.Errorf("seconds(%s) = %q, want %q", d, got, want)
		}
	}
}
