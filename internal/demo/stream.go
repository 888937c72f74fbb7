package demo

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Team is one of the two teams of config/samples/demo-setup.yaml: its
// namespace, its LocalQueue (named like the team) and its ClusterQueue.
type Team struct {
	Name         string
	Namespace    string
	LocalQueue   string
	ClusterQueue string
}

// The teams of the sample setup.
var (
	TeamA = Team{Name: "team-a", Namespace: "team-a", LocalQueue: "team-a", ClusterQueue: "team-a"}
	TeamB = Team{Name: "team-b", Namespace: "team-b", LocalQueue: "team-b", ClusterQueue: "team-b"}
	Teams = []Team{TeamA, TeamB}
)

// WorkloadPriorityClasses of the sample setup.
const (
	PriorityLow  = "low"
	PriorityHigh = "high"
)

// Limits and defaults of the stream.
const (
	DefaultJobs   = 40
	DefaultSeed   = 1
	DefaultWindow = time.Minute
	MinJobs       = 6
	MaxJobs       = 400
	// MaxGPUsPerJob keeps every Job within one team's nominal quota of a
	// flavor, so that a high-priority Job can always make room by
	// preempting its own team's work.
	MaxGPUsPerJob = 8
)

// JobSpec is one Job of the stream.
type JobSpec struct {
	Name     string
	Team     Team
	Priority string
	// At is when to submit the Job, from the start of the stream.
	At          time.Duration
	Parallelism int32
	// Completions is a multiple of Parallelism: the Job runs in
	// Completions/Parallelism waves of pods.
	Completions int32
	GPUsPerPod  int64
}

// GPUs is what the Job holds while it runs.
func (j JobSpec) GPUs() int64 { return int64(j.Parallelism) * j.GPUsPerPod }

// key is namespace/name.
func (j JobSpec) key() string { return j.Team.Namespace + "/" + j.Name }

// Waves is the number of rounds of pods the Job runs, its runtime in
// seconds on kwok, roughly.
func (j JobSpec) Waves() int32 { return j.Completions / j.Parallelism }

// StreamOptions say how many Jobs to make, from which seed, over how long.
type StreamOptions struct {
	Seed   int64
	Jobs   int
	Window time.Duration
}

// Validate checks the options.
func (o StreamOptions) Validate() error {
	if o.Jobs < MinJobs || o.Jobs > MaxJobs {
		return fmt.Errorf("the number of jobs must be between %d and %d, got %d", MinJobs, MaxJobs, o.Jobs)
	}
	if o.Window < time.Second {
		return fmt.Errorf("the stream must last at least a second, got %s", o.Window)
	}
	return nil
}

// scene is one part of the story: who submits what, when (as fractions of
// the window) and how big.
type scene struct {
	kind     string
	team     *Team // nil: either team, at random
	share    float64
	from, to float64
	highOdds float64
	sizes    []size
	minWaves int
	maxWaves int
}

// size is a Job's parallelism and GPUs per pod.
type size struct {
	pods int32
	gpus int64
}

// scenes of the story, in order; the urgent jobs are added separately.
var scenes = []scene{
	// team-a's sweep while team-b is idle: more than team-a's quota, so
	// it borrows, and long enough to still hold the GPUs when team-b comes.
	{kind: "sweep", team: &TeamA, share: 0.3, from: 0, to: 0.15,
		sizes: []size{{2, 1}, {2, 2}, {4, 1}, {4, 2}}, minWaves: 8, maxWaves: 14},
	// team-b starts working and wants its quota back.
	{kind: "train", team: &TeamB, share: 0.25, from: 0.25, to: 0.45, highOdds: 0.2,
		sizes: []size{{1, 2}, {1, 4}, {2, 2}, {2, 4}, {4, 1}, {4, 2}}, minWaves: 4, maxWaves: 10},
	// Both teams, smaller jobs, until the end of the window.
	{kind: "eval", share: 1, from: 0.45, to: 0.95, highOdds: 0.2,
		sizes: []size{{1, 1}, {1, 2}, {2, 1}, {2, 2}, {4, 1}, {4, 2}}, minWaves: 3, maxWaves: 8},
}

// urgent is a high-priority Job the size of a team's quota in one flavor:
// submitted while its team's quota is full of low-priority work, it
// preempts some of it.
type urgent struct {
	team *Team
	at   float64
}

var urgents = []urgent{{team: &TeamA, at: 0.35}, {team: &TeamB, at: 0.7}}

// Stream returns the Jobs to submit, ordered by submission time. The same
// options give the same stream. See the package comment for the story.
func Stream(o StreamOptions) ([]JobSpec, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(uint64(o.Seed), 0x6b756f7461)) // "kuota"
	nUrgent := 1
	if o.Jobs >= 10 {
		nUrgent = len(urgents)
	}
	left := o.Jobs - nUrgent
	var jobs []JobSpec
	for i, s := range scenes {
		n := int(float64(left)*s.share + 0.5)
		if i == len(scenes)-1 || n > left {
			n = left
		}
		left -= n
		for range n {
			jobs = append(jobs, s.job(r, o.Window))
		}
	}
	for _, u := range urgents[:nUrgent] {
		jobs = append(jobs, JobSpec{
			Name: "urgent", Team: *u.team, Priority: PriorityHigh, At: at(u.at, o.Window),
			Parallelism: 2, Completions: 8, GPUsPerPod: MaxGPUsPerJob / 2,
		})
	}
	slices.SortStableFunc(jobs, func(a, b JobSpec) int { return cmp.Compare(a.At, b.At) })
	for i := range jobs {
		jobs[i].Name = fmt.Sprintf("%s-%02d", jobs[i].Name, i+1)
	}
	return jobs, nil
}

// job draws one Job of the scene; its Name is the kind until Stream
// numbers it.
func (s scene) job(r *rand.Rand, window time.Duration) JobSpec {
	team := TeamA
	if s.team != nil {
		team = *s.team
	} else if r.IntN(2) == 1 {
		team = TeamB
	}
	priority := PriorityLow
	if r.Float64() < s.highOdds {
		priority = PriorityHigh
	}
	sz := s.sizes[r.IntN(len(s.sizes))]
	waves := int32(s.minWaves + r.IntN(s.maxWaves-s.minWaves+1))
	frac := s.from + r.Float64()*(s.to-s.from)
	return JobSpec{
		Name: s.kind, Team: team, Priority: priority, At: at(frac, window),
		Parallelism: sz.pods, Completions: sz.pods * waves, GPUsPerPod: sz.gpus,
	}
}

// at is a fraction of the window, rounded to 100ms.
func at(frac float64, window time.Duration) time.Duration {
	return time.Duration(frac * float64(window)).Round(100 * time.Millisecond)
}

// StreamStats describe a stream in a line.
type StreamStats struct {
	Jobs, High, Low    int
	PerTeam            map[string]int
	GPUSeconds         int64
	MinGPUs, MaxGPUs   int64
	MinWaves, MaxWaves int32
}

// Stats sums up a stream.
func Stats(jobs []JobSpec) StreamStats {
	s := StreamStats{PerTeam: map[string]int{}}
	for i, j := range jobs {
		s.Jobs++
		if j.Priority == PriorityHigh {
			s.High++
		} else {
			s.Low++
		}
		s.PerTeam[j.Team.Name]++
		s.GPUSeconds += j.GPUs() * int64(j.Waves())
		if i == 0 || j.GPUs() < s.MinGPUs {
			s.MinGPUs = j.GPUs()
		}
		if j.GPUs() > s.MaxGPUs {
			s.MaxGPUs = j.GPUs()
		}
		if i == 0 || j.Waves() < s.MinWaves {
			s.MinWaves = j.Waves()
		}
		if j.Waves() > s.MaxWaves {
			s.MaxWaves = j.Waves()
		}
	}
	return s
}
