package sim

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
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

// A phase of the latency model applies from its start on: a slow API
// server later in the run makes it take longer.
func TestLatencyPhases(t *testing.T) {
	setup, trace := loadScenario(t, "smoke")
	fast, _ := ParseLatency("admit=fixed:10ms,finish=fixed:10ms")
	slow, _ := ParseLatency("admit=fixed:10ms,finish=fixed:10ms;from=2s,admit=fixed:400ms,finish=fixed:400ms")
	a, err := Run(setup, slices.Clone(trace), Options{Seed: 1, Latency: fast})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(setup, slices.Clone(trace), Options{Seed: 1, Latency: slow})
	if err != nil {
		t.Fatal(err)
	}
	if b.Summary.WallSeconds < a.Summary.WallSeconds+1 {
		t.Fatalf("wall %.2fs with a slow phase from 2s, %.2fs without; want at least a second longer", b.Summary.WallSeconds, a.Summary.WallSeconds)
	}
	if !strings.Contains(b.Summary.Latency, "2 phases") {
		t.Fatalf("the summary describes the model as %q", b.Summary.Latency)
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
	ph, err := ParseLatency("admit=20ms;from=9s,admit=300ms,finish=exp:1s;from=20s,evict=5ms")
	if err != nil || len(ph.Phases) != 2 || ph.at(5*time.Second).Admit.Mean() != 20*time.Millisecond ||
		ph.at(9*time.Second).Admit.Mean() != 300*time.Millisecond || ph.at(25*time.Second).Admit.Mean() != 0 {
		t.Fatalf("phases parsed as %+v (%v)", ph, err)
	}
	if back, err := ParseLatency(ph.String()); err != nil || back.String() != ph.String() {
		t.Fatalf("%q read back as %q (%v)", ph.String(), back.String(), err)
	}
	chained := Latency{Stalls: []Stall{{Start: 20 * time.Second, Duration: 5 * time.Second}, {Start: 10 * time.Second, Duration: 12 * time.Second}}}
	if got := chained.land(12 * time.Second); got != 25*time.Second {
		t.Fatalf("a write due at 12s lands at %v; want 25s (pushed to 22s by one stall, then into the other)", got)
	}
	for _, bad := range []string{"admit", "write=1s", "admit=uniform:2s-1s", "admit=normal:1s", "admit=-1s",
		"stall=150s", "stall=150s+0s", "stall=-1s+2s", "stall=x+2s", "admit=quantiles:2ms/1ms", "admit=quantiles:1ms//2ms"} {
		if _, err := ParseLatency(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// A quantiles distribution draws between its points, with the mean of its
// piecewise linear distribution, and stays within its minimum and maximum.
func TestQuantilesDistribution(t *testing.T) {
	d, err := ParseDist("quantiles:10ms/20ms/20ms/110ms")
	if err != nil {
		t.Fatal(err)
	}
	if want := (15 + 20 + 65) * time.Millisecond / 3; d.Mean() != want {
		t.Fatalf("mean %v, want %v", d.Mean(), want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var sum time.Duration
	const n = 30000
	for range n {
		x := d.Sample(r)
		if x < 10*time.Millisecond || x > 110*time.Millisecond {
			t.Fatalf("drew %v, outside 10ms-110ms", x)
		}
		sum += x
	}
	if mean := sum / n; mean < d.Mean()*97/100 || mean > d.Mean()*103/100 {
		t.Fatalf("sample mean %v, want about %v", mean, d.Mean())
	}
	if one, _ := ParseDist("quantiles:7ms"); one.Sample(r) != 7*time.Millisecond || one.Mean() != 7*time.Millisecond {
		t.Fatalf("a one-point distribution drew %v", one.Sample(r))
	}
}

// A workload seen late by the scheduler (seenAfter in a trace) is admitted
// that much later, and its time to admission still counts from its
// creation.
func TestSeenAfterCountsInTimeToAdmission(t *testing.T) {
	line := `{"at":"2s","seenAfter":"700ms","namespace":"cq-0-0-cohort-0","name":"w","queue":"lq","runtime":"1s","podSets":[{"count":1,"requests":{"cpu":"1"}}]}`
	seen, err := ReadTrace(strings.NewReader(line))
	if err != nil || len(seen) != 1 || seen[0].SeenAfter != 700*time.Millisecond {
		t.Fatalf("read %+v (%v), want seenAfter 700ms", seen, err)
	}
	var back bytes.Buffer
	if err := WriteTrace(&back, seen); err != nil || !strings.Contains(back.String(), `"seenAfter":"700ms"`) {
		t.Fatalf("written back as %s (%v)", back.String(), err)
	}
	setup, trace := loadScenario(t, "smoke")
	w := trace[0]
	w.Arrive = 2 * time.Second
	fast, err := Run(setup, []Workload{w}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.SeenAfter = 700 * time.Millisecond
	lat, _ := ParseLatency("observe=fixed:100ms")
	slow, err := Run(setup, []Workload{w}, Options{Seed: 1, Latency: lat})
	if err != nil {
		t.Fatal(err)
	}
	f, s := fast.Workloads[0].Admissions[0], slow.Workloads[0].Admissions[0]
	if s.Decided-f.Decided != 700*time.Millisecond || s.Started-s.Decided != 100*time.Millisecond {
		t.Fatalf("decided at %v (%v when seen at once), started at %v; want 700ms later, started 100ms after", s.Decided, f.Decided, s.Started)
	}
	if got := slow.Summary.TimeToAdmission[0].Mean - fast.Summary.TimeToAdmission[0].Mean; got < 0.699 || got > 0.701 {
		t.Fatalf("time to admission grew by %.3fs, want 0.7s", got)
	}
}

// A simulation stops soon after its context is done (the harness is
// interrupted during a replay), with the context's error.
func TestStopsWhenTheContextIsDone(t *testing.T) {
	setup, trace := loadScenario(t, "smoke")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	decisions := 0
	_, err := Run(setup, trace, Options{Seed: 1, Context: ctx, OnDecision: func(time.Duration, *scheduling.Decision) {
		decisions++
		cancel()
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel = %v, want context.Canceled", err)
	}
	full, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if full.Summary.Admissions == 0 || decisions >= full.Summary.Admissions {
		t.Fatalf("%d decisions before stopping, want fewer than a full run's %d admissions", decisions, full.Summary.Admissions)
	}
}
