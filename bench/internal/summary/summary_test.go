package summary

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/kuota-dev/kuota/bench/internal/auditlog"
	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/scenario"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// at is t0 plus s seconds.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func queue(name, class string, nominal string) scenario.Queue {
	return scenario.Queue{Name: name, Class: class, Nominal: resource.MustParse(nominal)}
}

func planned(name, queue, class, request string) scenario.Workload {
	return scenario.Workload{Name: name, Queue: queue, Class: class, Request: resource.MustParse(request)}
}

// handMade is a run of three workloads over 10 s:
//
//   - w1 (small, 2 CPU, q1): created at 0, admitted at 1, finished at 5;
//   - w2 (small, 4 CPU, q2): created at 1, admitted at 2, evicted and
//     cleared at 3, admitted again at 4, finished at 8, evicted after;
//   - w3 (large, 10 CPU, q3): created at 2, seen admitted at 2.5 (stamped
//     2), finished at 10.
//
// q1 and q2 (class x) have 4 CPU of nominal quota each, q3 (class y) 10.
func handMade() Input {
	plan := &scenario.Plan{
		Queues: []scenario.Queue{queue("q1", "x", "4"), queue("q2", "x", "4"), queue("q3", "y", "10")},
		Workloads: []scenario.Workload{planned("w1", "q1", "small", "2"), planned("w2", "q2", "small", "4"),
			planned("w3", "q3", "large", "10")},
	}
	records := []driver.Record{
		{Plan: plan.Workloads[0], CreateSent: at(0), Created: at(0.01), CreationTimestamp: at(0),
			Admissions: []driver.Admission{{ClusterQueue: "q1", Observed: at(1), Stamped: at(1), Released: at(5)}},
			Finished:   at(5), FinalAdmittedStamp: at(1)},
		{Plan: plan.Workloads[1], CreateSent: at(1), Created: at(1.01), CreationTimestamp: at(1),
			Admissions: []driver.Admission{{ClusterQueue: "q2", Observed: at(2), Stamped: at(2), Released: at(3)},
				{ClusterQueue: "q2", Observed: at(4), Stamped: at(4), Released: at(8)}},
			Evictions: 2, EvictionsAfterFinish: 1, Finished: at(8), FinalAdmittedStamp: at(4)},
		{Plan: plan.Workloads[2], CreateSent: at(2), Created: at(2.01), CreationTimestamp: at(2),
			Admissions: []driver.Admission{{ClusterQueue: "q3", Observed: at(2.5), Stamped: at(2), Released: at(10)}},
			Finished:   at(10), FinalAdmittedStamp: at(2)},
	}
	queues := []driver.QueueSeries{
		// 2 CPU from 1.5 to 5.5: 8 CPU s.
		{Name: "q1", Class: "x", Samples: []driver.UsageSample{{At: at(-5), Milli: 0}, {At: at(1.5), Milli: 2000}, {At: at(5.5), Milli: 0}}},
		// 4 CPU from 2 to 3 and from 4 to 9: 24 CPU s.
		{Name: "q2", Class: "x", Samples: []driver.UsageSample{{At: at(2), Milli: 4000}, {At: at(3), Milli: 0},
			{At: at(4), Milli: 4000}, {At: at(9), Milli: 0}}},
		// 10 CPU from before the window to 6, then 5 to the end (the
		// sample at 12 is past it): 80 CPU s.
		{Name: "q3", Class: "y", Samples: []driver.UsageSample{{At: at(-1), Milli: 10000}, {At: at(6), Milli: 5000},
			{At: at(12), Milli: 0}}},
	}
	writes := auditlog.NewCounts()
	for key, n := range map[string]int64{"workloads/status": 5, "workloads": 1, "clusterqueues/status": 7, "events": 2} {
		writes.ByResource[key] = &auditlog.ResourceWrites{Writes: n, ByVerb: map[string]int64{"patch": n}}
		writes.Writes += n
	}
	writes.Failed = 1
	writes.ByResource["workloads/status"].Failed = 1
	writes.ByVerb["patch"] = writes.Writes
	return Input{
		Scenario: "hand", Plan: plan, WorkloadClasses: []string{"small"},
		Result: &driver.Result{Start: t0, End: at(10), Completed: true, Records: records, Queues: queues,
			Creates: 3, Finishes: 3, Clears: 1, MeanCreateLag: 2 * time.Millisecond, MaxCreateLag: 5 * time.Millisecond},
		Targets: &scenario.Targets{MaxWallSeconds: 9, MinUsagePercent: 50,
			MaxMeanTimeToAdmissionSeconds: map[string]float64{"small": 2, "large": 0.5, "medium": 1},
			MaxManagerWritesPerWorkload:   2},
		Manager: Process{CPUSeconds: 3, RunCPUSeconds: 2, PeakRSSMiB: 50},
		Writes:  writes,
		Audit:   &Audit{},
	}
}

func TestComputeCounts(t *testing.T) {
	s := Compute(handMade())
	if !s.Completed || s.Workloads != 3 || s.Created != 3 || s.Finished != 3 || s.Admitted != 3 ||
		s.Admissions != 4 || s.Evictions != 2 || s.EvictionsAfterFinish != 1 {
		t.Errorf("counts = %+v", s)
	}
	if !near(s.WallSeconds, 10) || !near(s.CreateLagMeanMs, 2) || !near(s.CreateLagMaxMs, 5) {
		t.Errorf("wall %v s, create lag %v / %v ms, want 10, 2, 5", s.WallSeconds, s.CreateLagMeanMs, s.CreateLagMaxMs)
	}
	if !s.OK() {
		t.Error("a completed run with a clean audit is not OK")
	}
}

func TestComputeTimeToAdmission(t *testing.T) {
	s := Compute(handMade())
	// small: stamped 1 (w1) and 3 (w2, up to its second admission);
	// large: stamped 0, observed 0.5. Classes given first, then the plan's.
	want := []ClassLatency{
		{Class: "small", Count: 2, Stamped: Stats{Mean: 2, P50: 1, P90: 3, P99: 3}, Observed: Stats{Mean: 2, P50: 1, P90: 3, P99: 3}},
		{Class: "large", Count: 1, Stamped: Stats{}, Observed: Stats{Mean: 0.5, P50: 0.5, P90: 0.5, P99: 0.5}},
	}
	if len(s.TimeToAdmission) != len(want) {
		t.Fatalf("time to admission = %+v, want %+v", s.TimeToAdmission, want)
	}
	for i, w := range want {
		if got := s.TimeToAdmission[i]; got != w {
			t.Errorf("time to admission[%d] = %+v, want %+v", i, got, w)
		}
	}
}

func TestComputeUsage(t *testing.T) {
	s := Compute(handMade())
	// x: nominal 8 CPU over 10 s = 80 CPU s. Admissions: 2x4 + 4x1 + 4x4
	// = 28 (35%); status: 8 + 24 = 32 (40%). y: 100 CPU s; admissions
	// 10 x 7.5 = 75 (75%); status 80 (80%).
	want := []ClassUsage{{Class: "x", Queues: 2, FromAdmissions: 35, FromStatus: 40},
		{Class: "y", Queues: 1, FromAdmissions: 75, FromStatus: 80}}
	if len(s.Usage) != len(want) {
		t.Fatalf("usage = %+v, want %+v", s.Usage, want)
	}
	for i, w := range want {
		got := s.Usage[i]
		if got.Class != w.Class || got.Queues != w.Queues || !near(got.FromAdmissions, w.FromAdmissions) || !near(got.FromStatus, w.FromStatus) {
			t.Errorf("usage[%d] = %+v, want %+v", i, got, w)
		}
	}
}

func TestUsageCountsOpenAdmissionsToTheEnd(t *testing.T) {
	plan := &scenario.Plan{Queues: []scenario.Queue{queue("q", "c", "1")}, Workloads: []scenario.Workload{planned("w", "q", "k", "1")}}
	res := &driver.Result{Start: at(-1), End: at(4), Records: []driver.Record{{Plan: plan.Workloads[0], CreateSent: at(0),
		Admissions: []driver.Admission{{ClusterQueue: "q", Observed: at(2)}}}},
		Queues: []driver.QueueSeries{{Name: "q", Samples: []driver.UsageSample{{At: at(3), Milli: 1000}}}}}
	// The window starts at the first create request (0), not at Start.
	u := usage(plan, res)
	if len(u) != 1 || !near(u[0].FromAdmissions, 50) || !near(u[0].FromStatus, 25) {
		t.Errorf("usage = %+v, want 50%% from admissions and 25%% from status", u)
	}
}

func TestComputeWrites(t *testing.T) {
	w := Compute(handMade()).Writes
	if w == nil || !near(w.PerWorkload, 2) || !near(w.AcceptedPerWorkload, 5.0/3) || w.WorkloadWrites != 6 || w.ClusterQueueStatus != 7 || w.Other != 2 ||
		w.Total != 15 || w.Failed != 1 {
		t.Errorf("writes = %+v, want 2 per workload (5/3 accepted), 6 to workloads, 7 cluster queue status, 2 other, 15 in all, 1 failed", w)
	}
	in := handMade()
	in.Writes = nil
	if s := Compute(in); s.Writes != nil {
		t.Errorf("writes without an audit log = %+v, want nil", s.Writes)
	}
}

func TestComputeTargets(t *testing.T) {
	s := Compute(handMade())
	want := []Check{
		{Target: "wall time (s)", Op: AtMost, Limit: 9, Actual: 10, Measured: true, Pass: false},
		{Target: "usage x (% of nominal, status)", Op: AtLeast, Limit: 50, Actual: 40, Measured: true, Pass: false},
		{Target: "usage y (% of nominal, status)", Op: AtLeast, Limit: 50, Actual: 80, Measured: true, Pass: true},
		{Target: "mean time to admission small (s, stamped)", Op: AtMost, Limit: 2, Actual: 2, Measured: true, Pass: true},
		{Target: "mean time to admission large (s, stamped)", Op: AtMost, Limit: 0.5, Actual: 0, Measured: true, Pass: true},
		{Target: "mean time to admission medium (s, stamped)", Op: AtMost, Limit: 1, Actual: 0, Measured: false, Pass: false},
		{Target: "manager writes per workload", Op: AtMost, Limit: 2, Actual: 2, Measured: true, Pass: true},
	}
	if len(s.Targets) != len(want) {
		t.Fatalf("targets = %+v, want %d checks", s.Targets, len(want))
	}
	for i, w := range want {
		got := s.Targets[i]
		if got.Target != w.Target || got.Op != w.Op || got.Limit != w.Limit || !near(got.Actual, w.Actual) ||
			got.Measured != w.Measured || got.Pass != w.Pass {
			t.Errorf("targets[%d] = %+v, want %+v", i, got, w)
		}
	}
	in := handMade()
	in.Targets = nil
	if s := Compute(in); s.Targets != nil {
		t.Errorf("targets without a targets file = %+v, want none", s.Targets)
	}
}

func TestOK(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Summary)
		want bool
	}{
		{"clean", func(*Summary) {}, true},
		{"incomplete", func(s *Summary) { s.Completed = false }, false},
		{"violations", func(s *Summary) { s.Audit = &Audit{Violations: 1} }, false},
		{"audit failed", func(s *Summary) { s.Audit = &Audit{Error: "no"} }, false},
		{"no audit", func(s *Summary) { s.Audit = nil }, false},
		{"problem", func(s *Summary) { s.Problems = []string{"the manager died"} }, false},
	} {
		s := Compute(handMade())
		tc.edit(s)
		if got := s.OK(); got != tc.want {
			t.Errorf("%s: OK = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1)
	}
	for _, tc := range []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 50, 5},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 99, 10},
		{hundred, 99, 99},
		{hundred, 90, 90},
		{[]float64{7}, 50, 7},
		{nil, 50, 0},
	} {
		if got := Percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
	}
	if got := stats([]float64{3, 1, 2}); got != (Stats{Mean: 2, P50: 2, P90: 3, P99: 3}) {
		t.Errorf("stats(3, 1, 2) = %+v", got)
	}
}

func TestRenderAndYAML(t *testing.T) {
	s := Compute(handMade())
	var b strings.Builder
	if err := Render(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Scenario hand: completed", "Wall time 10.00 s", "35.0", "40.0", "2.00 per workload, 1.67 accepted",
		"workloads/status", "Audit: no violations", "PASS", "MISS", "n/a"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	s.Audit = &Audit{Violations: 1, Messages: []string{"[QuotaExceeded] Cohort c: too much"}}
	b.Reset()
	if err := Render(&b, s); err != nil || !strings.Contains(b.String(), "FAILED with 1 violation(s)") || !strings.Contains(b.String(), "Cohort c: too much") {
		t.Errorf("table with a violation:\n%s", b.String())
	}
	data, err := yaml.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fromStatusPercent: 40", "perWorkload: 2", "wallSeconds: 10", "p90: 3"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("summary YAML lacks %q:\n%s", want, data)
		}
	}
}
