package demo

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func mustStream(t *testing.T, o StreamOptions) []JobSpec {
	t.Helper()
	jobs, err := Stream(o)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func TestStreamIsDeterministic(t *testing.T) {
	o := StreamOptions{Seed: 1, Jobs: DefaultJobs, Window: DefaultWindow}
	a, b := mustStream(t, o), mustStream(t, o)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same options gave two different streams")
	}
	o.Seed = 2
	if c := mustStream(t, o); reflect.DeepEqual(a, c) {
		t.Fatal("seeds 1 and 2 gave the same stream")
	}
}

func TestStreamShape(t *testing.T) {
	for _, n := range []int{MinJobs, 9, 10, DefaultJobs, 77, MaxJobs} {
		for seed := range int64(5) {
			o := StreamOptions{Seed: seed, Jobs: n, Window: DefaultWindow}
			checkStream(t, o, mustStream(t, o))
		}
	}
}

// checkStream checks what every stream promises.
func checkStream(t *testing.T, o StreamOptions, jobs []JobSpec) {
	t.Helper()
	if len(jobs) != o.Jobs {
		t.Fatalf("%+v: %d jobs", o, len(jobs))
	}
	names := map[string]bool{}
	var urgentA bool
	for i, j := range jobs {
		if i > 0 && j.At < jobs[i-1].At {
			t.Errorf("%+v: %s submitted before %s", o, j.Name, jobs[i-1].Name)
		}
		if j.At < 0 || j.At > o.Window {
			t.Errorf("%+v: %s at %s, outside the window", o, j.Name, j.At)
		}
		if names[j.key()] {
			t.Errorf("%+v: %s twice", o, j.key())
		}
		names[j.key()] = true
		if j.Parallelism < 1 || j.Completions%j.Parallelism != 0 || j.Waves() < 1 {
			t.Errorf("%+v: %s parallelism %d completions %d", o, j.Name, j.Parallelism, j.Completions)
		}
		if j.GPUs() < 1 || j.GPUs() > MaxGPUsPerJob {
			t.Errorf("%+v: %s holds %d GPUs", o, j.Name, j.GPUs())
		}
		if j.Priority != PriorityLow && j.Priority != PriorityHigh {
			t.Errorf("%+v: %s priority %q", o, j.Name, j.Priority)
		}
		if j.Team != TeamA && j.Team != TeamB {
			t.Errorf("%+v: %s team %+v", o, j.Name, j.Team)
		}
		// team-b is idle while team-a's sweep starts.
		if j.At < o.Window/4 && j.Team != TeamA {
			t.Errorf("%+v: %s of %s at %s, during team-a's sweep", o, j.Name, j.Team.Name, j.At)
		}
		if strings.HasPrefix(j.Name, "urgent-") {
			if j.Priority != PriorityHigh || j.GPUs() != MaxGPUsPerJob {
				t.Errorf("%+v: urgent job %+v", o, j)
			}
			urgentA = urgentA || j.Team == TeamA
		}
	}
	if !urgentA {
		t.Errorf("%+v: no urgent job of team-a", o)
	}
}

// The default stream tells the story: both teams, both priorities, a
// sweep that asks for more than the whole cluster, not too much work.
func TestDefaultStreamTellsTheStory(t *testing.T) {
	jobs := mustStream(t, StreamOptions{Seed: DefaultSeed, Jobs: DefaultJobs, Window: DefaultWindow})
	st := Stats(jobs)
	if st.PerTeam[TeamA.Name] == 0 || st.PerTeam[TeamB.Name] == 0 || st.High == 0 || st.Low <= st.High {
		t.Errorf("stats %+v", st)
	}
	var sweep int64
	for _, j := range jobs {
		if strings.HasPrefix(j.Name, "sweep-") {
			sweep += j.GPUs()
		}
	}
	if sweep <= CapacityGPUs() {
		t.Errorf("the sweep asks for %d GPUs, not more than the %d of the cluster: team-a would not queue", sweep, CapacityGPUs())
	}
	// The whole stream is about a minute of the full cluster, so that it
	// drains well before the demo's deadline.
	if limit := CapacityGPUs() * int64(DefaultWindow/time.Second) * 3 / 2; st.GPUSeconds > limit {
		t.Errorf("%d GPU-waves of work, more than %d", st.GPUSeconds, limit)
	}
	if jobs[0].Name != "sweep-01" || jobs[len(jobs)-1].Name != "eval-40" {
		t.Errorf("first %s, last %s", jobs[0].Name, jobs[len(jobs)-1].Name)
	}
}

func TestStreamValidation(t *testing.T) {
	for _, o := range []StreamOptions{
		{Jobs: MinJobs - 1, Window: time.Minute},
		{Jobs: MaxJobs + 1, Window: time.Minute},
		{Jobs: DefaultJobs, Window: time.Millisecond},
	} {
		if _, err := Stream(o); err == nil {
			t.Errorf("Stream(%+v) = nil error", o)
		}
	}
}

func TestStats(t *testing.T) {
	jobs := []JobSpec{
		{Team: TeamA, Priority: PriorityLow, Parallelism: 2, Completions: 6, GPUsPerPod: 2},
		{Team: TeamB, Priority: PriorityHigh, Parallelism: 1, Completions: 8, GPUsPerPod: 1},
	}
	got := Stats(jobs)
	want := StreamStats{Jobs: 2, High: 1, Low: 1, PerTeam: map[string]int{"team-a": 1, "team-b": 1},
		GPUSeconds: 4*3 + 1*8, MinGPUs: 1, MaxGPUs: 4, MinWaves: 3, MaxWaves: 8}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}
