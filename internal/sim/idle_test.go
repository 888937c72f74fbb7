package sim

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/scheduling"
)

// Skipping the cohort trees whose last cycle changed nothing
// (cache.Cache.SkipIdle) must not change a single event: the same run with
// every tree decided in every cycle gives the same log and figures, under
// contention, preemption, patience and latency.
func TestSkippingIdleTreesChangesNothing(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		first    int
		latency  string
		patience time.Duration
	}{
		{"one-cohort", 1500, "admit=exp:80ms,evict=uniform:10ms-2s,observe=20ms,finish=exp:50ms", 0},
		{"baseline", 1500, "admit=exp:1s,evict=exp:20s,finish=exp:15s,observe=exp:1s", scheduling.DefaultPatience},
		{"baseline", 1500, "admit=exp:200ms,evict=exp:2s,finish=exp:1s,observe=exp:100ms", 0},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			setup, trace := loadScenario(t, tc.scenario)
			if tc.first > 0 {
				slices.SortStableFunc(trace, func(a, b Workload) int { return int(a.Arrive - b.Arrive) })
				trace = trace[:tc.first]
			}
			lat, err := ParseLatency(tc.latency)
			if err != nil {
				t.Fatal(err)
			}
			run := func(all bool) (Summary, string, time.Duration) {
				var events bytes.Buffer
				opts := Options{Seed: 3, Latency: lat, Events: &events, EvaluateAll: all}
				opts.Scheduling.Patience = tc.patience
				start := time.Now()
				res, err := Run(setup, trace, opts)
				if err != nil {
					t.Fatal(err)
				}
				s := res.Summary
				s.RunSeconds = 0
				return s, events.String(), time.Since(start)
			}
			all, allLog, allTook := run(true)
			skip, skipLog, skipTook := run(false)
			t.Logf("every tree: %s; idle trees skipped: %s; %d evictions, %d admissions", allTook, skipTook, all.Evictions, all.Admissions)
			if all.Evictions == 0 {
				t.Errorf("no evictions: the case does not exercise preemption")
			}
			if allLog != skipLog {
				a, b := bytes.Split([]byte(allLog), []byte("\n")), bytes.Split([]byte(skipLog), []byte("\n"))
				for i := range min(len(a), len(b)) {
					if !bytes.Equal(a[i], b[i]) {
						t.Fatalf("event logs differ at line %d:\nevery tree: %s\nskipping:   %s", i+1, a[i], b[i])
					}
				}
				t.Fatalf("event logs differ in length: %d and %d lines", len(a), len(b))
			}
			if !reflect.DeepEqual(all, skip) {
				t.Fatalf("figures differ:\n%+v\n%+v", all, skip)
			}
		})
	}
}
