package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const small = `
cohorts:
- className: c
  count: 2
  queuesSets:
  - className: q
    count: 1
    nominalQuota: "4"
    reclaimWithinCohort: Any
    workloadsSets:
    - count: 2
      creationIntervalMs: 100
      workloads:
      - {className: a, runtimeMs: 10, priority: 1, request: "1"}
      - {className: b, runtimeMs: 20, priority: 2, request: 500m}
`

func TestExpand(t *testing.T) {
	cfg, err := Parse([]byte(small))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Expand()
	if strings.Join(p.Cohorts, ",") != "c-0,c-1" || len(p.Queues) != 2 || p.Queues[1].Name != "q-0-0-c-1" ||
		p.Queues[0].BorrowingLimit != nil || p.Queues[0].Nominal.MilliValue() != 4000 {
		t.Fatalf("cohorts %v, queues %+v", p.Cohorts, p.Queues)
	}
	// Per queue, templates round-robin one interval apart: a at 100 ms,
	// b at 200, a at 300, b at 400; both queues interleaved by due time.
	want := []struct {
		name, queue string
		due         time.Duration
	}{
		{"a-0-0-0", "q-0-0-c-0", 100 * time.Millisecond}, {"a-0-0-0", "q-0-0-c-1", 100 * time.Millisecond},
		{"b-0-0-1", "q-0-0-c-0", 200 * time.Millisecond}, {"b-0-0-1", "q-0-0-c-1", 200 * time.Millisecond},
		{"a-0-1-0", "q-0-0-c-0", 300 * time.Millisecond}, {"a-0-1-0", "q-0-0-c-1", 300 * time.Millisecond},
		{"b-0-1-1", "q-0-0-c-0", 400 * time.Millisecond}, {"b-0-1-1", "q-0-0-c-1", 400 * time.Millisecond},
	}
	if len(p.Workloads) != len(want) {
		t.Fatalf("%d workloads, want %d", len(p.Workloads), len(want))
	}
	for i, w := range want {
		got := p.Workloads[i]
		if got.Name != w.name || got.Queue != w.queue || got.Due != w.due {
			t.Errorf("workload %d = %s in %s at %s, want %s in %s at %s", i, got.Name, got.Queue, got.Due, w.name, w.queue, w.due)
		}
	}
	if b := p.Workloads[2]; b.Class != "b" || b.Priority != 2 || b.Runtime != 20*time.Millisecond || b.Request.MilliValue() != 500 {
		t.Errorf("b = %+v", b)
	}
	if got := strings.Join(cfg.WorkloadClasses(), ","); got != "a,b" {
		t.Errorf("classes = %s, want a,b", got)
	}
}

func TestParseRejects(t *testing.T) {
	for name, text := range map[string]string{
		"unknown field":  strings.Replace(small, "nominalQuota", "nominalQuotas", 1),
		"unknown policy": strings.Replace(small, "reclaimWithinCohort: Any", "reclaimWithinCohort: Sometimes", 1),
		"bad request":    strings.Replace(small, `request: "1"`, `request: "-1"`, 1),
		"no cohorts":     "cohorts: []\n",
	} {
		if _, err := Parse([]byte(text)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestResolveAndName(t *testing.T) {
	if got := Resolve("smoke", "/s"); got != "/s/smoke.yaml" {
		t.Errorf("Resolve(smoke) = %s", got)
	}
	if got := Resolve("x/y.yaml", "/s"); got != "x/y.yaml" {
		t.Errorf("Resolve(x/y.yaml) = %s", got)
	}
	if got := Name("/a/b/one-cohort.yaml"); got != "one-cohort" {
		t.Errorf("Name = %s", got)
	}
	if got := TargetsPath("/a/baseline.yaml"); got != "/a/baseline.targets.yaml" {
		t.Errorf("TargetsPath = %s", got)
	}
}

// TestScenarioFiles loads the shipped scenarios and checks their sizes.
func TestScenarioFiles(t *testing.T) {
	for name, want := range map[string][2]int{
		"smoke": {4, 240}, "one-cohort": {6, 3000}, "baseline": {30, 15000}, "large-scale": {1000, 50000},
	} {
		path := Resolve(name, filepath.Join("..", "..", "bench", "scenarios"))
		cfg, err := Load(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		p := cfg.Expand()
		if len(p.Queues) != want[0] || len(p.Workloads) != want[1] {
			t.Errorf("%s: %d ClusterQueues, %d workloads; want %d, %d", name, len(p.Queues), len(p.Workloads), want[0], want[1])
		}
		targets, err := LoadTargets(path)
		if hasTargets := name == "baseline" || name == "one-cohort"; err != nil || hasTargets != (targets != nil) {
			t.Errorf("%s: targets %+v, %v", name, targets, err)
		}
	}
	targets, _ := LoadTargets(Resolve("baseline", filepath.Join("..", "..", "bench", "scenarios")))
	if targets == nil || targets.MaxEvictionsPerWorkload == nil || *targets.MaxEvictionsPerWorkload != 0.05 ||
		targets.MaxMeanTimeToAdmissionSeconds["small"] != 148 || targets.Kueue == nil || targets.Kueue.MeanTimeToAdmissionSeconds["large"] != 42 {
		t.Errorf("baseline targets = %+v", targets)
	}
}
