package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Dist is a distribution of durations.
type Dist struct {
	kind string // "", "fixed", "uniform", "exp", "quantiles"
	a, b time.Duration
	// points are a "quantiles" distribution's values at equally spaced
	// probabilities, from the minimum to the maximum.
	points   []time.Duration
	original string
}

// Sample draws a duration.
func (d Dist) Sample(r *rand.Rand) time.Duration {
	switch d.kind {
	case "fixed":
		return d.a
	case "uniform":
		if d.b <= d.a {
			return d.a
		}
		return d.a + time.Duration(r.Int64N(int64(d.b-d.a)+1))
	case "exp":
		// Mean a, cut at 20 times the mean.
		x := -math.Log(1-r.Float64()) * float64(d.a)
		return time.Duration(min(x, 20*float64(d.a)))
	case "quantiles":
		// The inverse of a piecewise linear distribution function.
		if len(d.points) == 1 {
			return d.points[0]
		}
		u := r.Float64() * float64(len(d.points)-1)
		i := int(u)
		lo, hi := d.points[i], d.points[min(i+1, len(d.points)-1)]
		return lo + time.Duration((u-float64(i))*float64(hi-lo))
	}
	return 0
}

// Mean is the distribution's mean.
func (d Dist) Mean() time.Duration {
	switch d.kind {
	case "fixed", "exp":
		return d.a
	case "uniform":
		return (d.a + d.b) / 2
	case "quantiles":
		if len(d.points) == 1 {
			return d.points[0]
		}
		var sum time.Duration
		for i := 1; i < len(d.points); i++ {
			sum += (d.points[i-1] + d.points[i]) / 2
		}
		return sum / time.Duration(len(d.points)-1)
	}
	return 0
}

func (d Dist) String() string {
	if d.original == "" {
		return "0"
	}
	return d.original
}

// ParseDist reads "0", "50ms" or "fixed:50ms", "uniform:10ms-200ms",
// "exp:100ms" (exponential with that mean) and "quantiles:1ms/4ms/30ms"
// (values at equally spaced probabilities from the minimum to the
// maximum, ascending; what `kuota-bench` fits from a live run).
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return Dist{}, nil
	}
	kind, rest, found := strings.Cut(s, ":")
	if !found {
		kind, rest = "fixed", s
	}
	parse := func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%q is not a non-negative duration", v)
		}
		return d, nil
	}
	out := Dist{kind: kind, original: s}
	var err error
	switch kind {
	case "fixed", "exp":
		out.a, err = parse(rest)
	case "uniform":
		lo, hi, ok := strings.Cut(rest, "-")
		if !ok {
			return Dist{}, fmt.Errorf("uniform needs min-max, got %q", rest)
		}
		if out.a, err = parse(lo); err == nil {
			out.b, err = parse(hi)
		}
		if err == nil && out.b < out.a {
			err = fmt.Errorf("uniform %q: max below min", rest)
		}
	case "quantiles":
		out.points, err = parsePoints(rest, parse)
	default:
		return Dist{}, fmt.Errorf("unknown distribution %q (want fixed, uniform, exp or quantiles)", kind)
	}
	if err != nil {
		return Dist{}, fmt.Errorf("latency %q: %w", s, err)
	}
	return out, nil
}

// maxPoints bounds a quantiles distribution.
const maxPoints = 1001

// parsePoints reads ascending durations separated by slashes.
func parsePoints(s string, parse func(string) (time.Duration, error)) ([]time.Duration, error) {
	parts := strings.Split(s, "/")
	if len(parts) > maxPoints {
		return nil, fmt.Errorf("quantiles: %d values, at most %d", len(parts), maxPoints)
	}
	points := make([]time.Duration, 0, len(parts))
	for _, p := range parts {
		d, err := parse(p)
		if err != nil {
			return nil, err
		}
		if n := len(points); n > 0 && d < points[n-1] {
			return nil, fmt.Errorf("quantiles: %s after %s, want ascending values", d, points[n-1])
		}
		points = append(points, d)
	}
	return points, nil
}

// Dists are the latencies of each step.
type Dists struct {
	// Admit is how long an admission write takes to land.
	Admit Dist
	// Evict is how long an eviction write takes to land.
	Evict Dist
	// Observe is how long a job takes to notice its admission and start.
	Observe Dist
	// Finish is how long a finished job's write takes to reach the
	// manager.
	Finish Dist
	// Cycle is how long one scheduling cycle takes.
	Cycle Dist
	// JobWrite is how long one Finished write holds a worker of the job
	// side (with Latency.Jobs workers; jobside.go).
	JobWrite Dist
}

// Latency models what the API server and the jobs add to the core's
// decisions. Zero everywhere is the policy's own limit.
type Latency struct {
	Dists
	// Stalls are spans in which the API server delivers nothing: a write
	// (admission, eviction, a job's finish) that would land during one
	// lands at its end, and a job does not start before then.
	Stalls []Stall
	// Jobs, when positive, is how many workers the job side has: ends are
	// written one at a time per worker, in the order the jobs ended
	// (jobside.go). 0: each job reports its end on its own.
	Jobs int
	// Phases, in ascending order of start, each replace the distributions
	// from their start on: a live API server is slower at some times than
	// at others (a model fitted from a run has one phase per stretch).
	Phases []Phase
}

// Phase is the latencies from a virtual time on.
type Phase struct {
	From time.Duration
	Dists
}

// at returns the distributions in effect at virtual time t.
func (l *Latency) at(t time.Duration) *Dists {
	d := &l.Dists
	for i := range l.Phases {
		if l.Phases[i].From > t {
			break
		}
		d = &l.Phases[i].Dists
	}
	return d
}

// Stall is a span of virtual time in which nothing lands.
type Stall struct{ Start, Duration time.Duration }

// land returns when a write due at t lands, given the stalls.
// Stalls may overlap and come in any order: a write pushed to one's end
// may fall in another.
func (l Latency) land(t time.Duration) time.Duration {
	for moved := true; moved; {
		moved = false
		for _, s := range l.Stalls {
			if t >= s.Start && t < s.Start+s.Duration {
				t, moved = s.Start+s.Duration, true
			}
		}
	}
	return t
}

// parseStall reads START+DURATION, e.g. 150s+15s.
func parseStall(v string) (Stall, error) {
	a, b, ok := strings.Cut(v, "+")
	if !ok {
		return Stall{}, fmt.Errorf("stall %q: want start+duration, e.g. 150s+15s", v)
	}
	start, err1 := time.ParseDuration(strings.TrimSpace(a))
	dur, err2 := time.ParseDuration(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || start < 0 || dur <= 0 {
		return Stall{}, fmt.Errorf("stall %q: want a non-negative start and a positive duration, e.g. 150s+15s", v)
	}
	return Stall{Start: start, Duration: dur}, nil
}

// maxJobWorkers bounds jobs=.
const maxJobWorkers = 10000

// ParseLatency reads comma-separated name=dist pairs, names among admit,
// evict, observe, finish, cycle and jobwrite, jobs=N (the job side's
// workers, jobside.go) and stall=START+DURATION pairs (each adds a stall);
// "" is zero latency. Phases follow, separated by
// semicolons, each starting with from=DURATION, in ascending order:
// "admit=20ms;from=9s,admit=300ms".
func ParseLatency(s string) (Latency, error) {
	var l Latency
	for i, seg := range strings.Split(s, ";") {
		if i == 0 {
			if err := l.parseSegment(seg, &l.Dists, nil); err != nil {
				return l, err
			}
			continue
		}
		var ph Phase
		if err := l.parseSegment(seg, &ph.Dists, &ph.From); err != nil {
			return l, err
		}
		if n := len(l.Phases); n > 0 && ph.From <= l.Phases[n-1].From {
			return l, fmt.Errorf("latency phase from=%s: phases must start in ascending order (after from=%s)", ph.From, l.Phases[n-1].From)
		}
		l.Phases = append(l.Phases, ph)
	}
	return l, nil
}

// parseSegment reads one segment's pairs into d; from, when not nil, must
// be set by the segment's first pair.
func (l *Latency) parseSegment(seg string, d *Dists, from *time.Duration) error {
	if strings.TrimSpace(seg) == "" {
		if from != nil {
			return fmt.Errorf("latency: an empty phase (want from=DURATION first)")
		}
		return nil
	}
	for k, part := range strings.Split(seg, ",") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("latency %q: want name=distribution", part)
		}
		name = strings.TrimSpace(name)
		if from != nil && (k == 0) != (name == "from") {
			return fmt.Errorf("latency %q: a phase starts with from=DURATION, and only once", part)
		}
		switch name {
		case "from":
			if from == nil {
				return fmt.Errorf("latency %q: from= starts a phase, after a semicolon", part)
			}
			t, err := time.ParseDuration(strings.TrimSpace(value))
			if err != nil || t < 0 {
				return fmt.Errorf("latency %q: want a non-negative duration", part)
			}
			*from = t
			continue
		case "jobs":
			if from != nil {
				return fmt.Errorf("latency %q: jobs= applies to the whole run, not to a phase", part)
			}
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > maxJobWorkers {
				return fmt.Errorf("latency %q: jobs wants a number of workers from 0 to %d", part, maxJobWorkers)
			}
			l.Jobs = n
			continue
		case "stall":
			st, err := parseStall(value)
			if err != nil {
				return err
			}
			l.Stalls = append(l.Stalls, st)
			continue
		}
		dist, err := ParseDist(value)
		if err != nil {
			return err
		}
		switch name {
		case "admit":
			d.Admit = dist
		case "evict":
			d.Evict = dist
		case "observe":
			d.Observe = dist
		case "finish":
			d.Finish = dist
		case "cycle":
			d.Cycle = dist
		case "jobwrite":
			d.JobWrite = dist
		default:
			return fmt.Errorf("latency %q: unknown name %q (want admit, evict, observe, finish, cycle, jobs, jobwrite or stall)", part, name)
		}
	}
	return nil
}

func (d Dists) String() string {
	out := fmt.Sprintf("admit=%s,evict=%s,observe=%s,finish=%s,cycle=%s", d.Admit, d.Evict, d.Observe, d.Finish, d.Cycle)
	if d.JobWrite.kind != "" {
		out += ",jobwrite=" + d.JobWrite.String()
	}
	return out
}

func (l Latency) String() string {
	out := l.Dists.String()
	if l.Jobs > 0 {
		out += fmt.Sprintf(",jobs=%d", l.Jobs)
	}
	for _, s := range l.Stalls {
		out += fmt.Sprintf(",stall=%s+%s", s.Start, s.Duration)
	}
	for _, p := range l.Phases {
		out += fmt.Sprintf(";from=%s,%s", p.From, p.Dists)
	}
	return out
}

// Describe is a short account of the model: the whole of it, or for a
// model with phases, its first distributions and how many phases follow.
func (l Latency) Describe() string {
	if len(l.Phases) == 0 {
		return l.String()
	}
	return fmt.Sprintf("%d phases, the last from %s on (a fitted model)", len(l.Phases)+1, l.Phases[len(l.Phases)-1].From)
}
