package sim

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/scenario"
	"github.com/kuota-dev/kuota/internal/scheduling"
)

func loadScenario(t testing.TB, name string) (*Setup, []Workload) {
	t.Helper()
	cfg, err := scenario.Load(scenario.Resolve(name, filepath.Join("..", "..", "bench", "scenarios")))
	if err != nil {
		t.Fatal(err)
	}
	return FromScenario(cfg.Expand(), "bench-flavor")
}

func TestSmokeRunsToTheEnd(t *testing.T) {
	setup, trace := loadScenario(t, "smoke")
	res, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Finished != s.Workloads || s.Workloads == 0 {
		t.Fatalf("finished %d of %d", s.Finished, s.Workloads)
	}
	t.Logf("%+v", s)
}

// The same seed gives the same run, latency model included; another seed
// may differ.
func TestDeterministicForASeed(t *testing.T) {
	setup, trace := loadScenario(t, "smoke")
	lat, err := ParseLatency("admit=exp:80ms,evict=uniform:10ms-200ms,observe=20ms,finish=exp:50ms,cycle=5ms")
	if err != nil {
		t.Fatal(err)
	}
	run := func(seed uint64) Summary {
		var events bytes.Buffer
		res, err := Run(setup, trace, Options{Seed: seed, Latency: lat, Events: &events})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		s.RunSeconds = 0
		if events.Len() == 0 {
			t.Fatal("no event log written")
		}
		return s
	}
	a, b := run(7), run(7)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs with seed 7 differ:\n%+v\n%+v", a, b)
	}
	if c := run(8); reflect.DeepEqual(a, c) {
		t.Log("seeds 7 and 8 gave the same figures (possible, but unlikely)")
	}
}

// Latency slows admissions down: with a slower API server, workloads wait
// longer and the run takes longer.
func TestLatencyDelaysAdmissions(t *testing.T) {
	setup, trace := loadScenario(t, "smoke")
	fast, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	lat, _ := ParseLatency("admit=fixed:300ms,observe=fixed:100ms,finish=fixed:300ms")
	slow, err := Run(setup, trace, Options{Seed: 1, Latency: lat})
	if err != nil {
		t.Fatal(err)
	}
	if slow.Summary.WallSeconds <= fast.Summary.WallSeconds {
		t.Fatalf("wall %.2fs with latency, %.2fs without", slow.Summary.WallSeconds, fast.Summary.WallSeconds)
	}
}

// Without patience, workloads that fit only by preemption evict at once
// (Kueue's rule); with it, short-running victims are waited for.
func TestPatienceAvoidsEvictions(t *testing.T) {
	setup, trace := loadScenario(t, "one-cohort")
	kueueLike, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	patient, err := Run(setup, trace, Options{Seed: 1, Scheduling: scheduling.Options{Patience: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	k, p := kueueLike.Summary, patient.Summary
	if k.Evictions == 0 || p.EvictionsPerWorkload > 0.05 || p.UsagePercent < 90 {
		t.Fatalf("evictions %d without patience, %.3f per workload with it (usage %.1f%%)", k.Evictions, p.EvictionsPerWorkload, p.UsagePercent)
	}
}

func TestTraceRoundTrip(t *testing.T) {
	_, trace := loadScenario(t, "smoke")
	var buf bytes.Buffer
	if err := WriteTrace(&buf, trace[:10]); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTrace(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 10 {
		t.Fatalf("read %d workloads back, want 10", len(back))
	}
	for i := range back {
		a, b := LineOf(trace[i]), LineOf(back[i])
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("workload %d changed in the round trip:\n%+v\n%+v", i, a, b)
		}
	}
}

func TestReadTraceRefusesBadLines(t *testing.T) {
	for _, line := range []string{
		`{"at":"1s","namespace":"n","name":"w","queue":"q","runtime":"soon","podSets":[]}`,
		`{"at":"-1s","namespace":"n","name":"w","queue":"q","runtime":"1s","podSets":[]}`,
		`{"at":"1s","namespace":"n","name":"w","queue":"q","runtime":"1s","podSets":[{"count":1,"requests":{"cpu":"lots"}}]}`,
		`{"at":"1s","surprise":true}`,
		`not json`,
	} {
		if _, err := ReadTrace(strings.NewReader(line)); err == nil {
			t.Errorf("accepted %s", line)
		}
	}
}

func TestParseLatency(t *testing.T) {
	l, err := ParseLatency("admit=50ms, evict=uniform:10ms-20ms,finish=exp:1s")
	if err != nil {
		t.Fatal(err)
	}
	if l.Admit.Mean() != 50*time.Millisecond || l.Evict.Mean() != 15*time.Millisecond || l.Finish.Mean() != time.Second {
		t.Fatalf("parsed %s", l)
	}
	st, err := ParseLatency("stall=150s+15s,stall=1m+2s")
	if err != nil || len(st.Stalls) != 2 || st.Stalls[0] != (Stall{Start: 150 * time.Second, Duration: 15 * time.Second}) ||
		st.Stalls[1] != (Stall{Start: time.Minute, Duration: 2 * time.Second}) {
		t.Fatalf("stalls parsed as %+v (%v)", st.Stalls, err)
	}
	chained := Latency{Stalls: []Stall{{Start: 20 * time.Second, Duration: 5 * time.Second}, {Start: 10 * time.Second, Duration: 12 * time.Second}}}
	if got := chained.land(12 * time.Second); got != 25*time.Second {
		t.Fatalf("a write due at 12s lands at %v; want 25s (pushed to 22s by one stall, then into the other)", got)
	}
	for _, bad := range []string{"admit", "write=1s", "admit=uniform:2s-1s", "admit=normal:1s", "admit=-1s",
		"stall=150s", "stall=150s+0s", "stall=-1s+2s", "stall=x+2s"} {
		if _, err := ParseLatency(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
