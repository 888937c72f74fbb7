package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Dist is a distribution of durations.
type Dist struct {
	kind     string // "", "fixed", "uniform", "exp"
	a, b     time.Duration
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
	}
	return 0
}

func (d Dist) String() string {
	if d.original == "" {
		return "0"
	}
	return d.original
}

// ParseDist reads "0", "50ms" or "fixed:50ms", "uniform:10ms-200ms" and
// "exp:100ms" (exponential with that mean).
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
	default:
		return Dist{}, fmt.Errorf("unknown distribution %q (want fixed, uniform or exp)", kind)
	}
	if err != nil {
		return Dist{}, fmt.Errorf("latency %q: %w", s, err)
	}
	return out, nil
}

// Latency models what the API server and the jobs add to the core's
// decisions. Zero everywhere is the policy's own limit.
type Latency struct {
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
	// Stalls are spans in which the API server delivers nothing: a write
	// (admission, eviction, a job's finish) that would land during one
	// lands at its end, and a job does not start before then.
	Stalls []Stall
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

// ParseLatency reads comma-separated name=dist pairs, names among admit,
// evict, observe, finish and cycle, and stall=START+DURATION pairs (each
// adds a stall); "" is zero latency.
func ParseLatency(s string) (Latency, error) {
	var l Latency
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return l, fmt.Errorf("latency %q: want name=distribution", part)
		}
		if strings.TrimSpace(name) == "stall" {
			st, err := parseStall(value)
			if err != nil {
				return l, err
			}
			l.Stalls = append(l.Stalls, st)
			continue
		}
		d, err := ParseDist(value)
		if err != nil {
			return l, err
		}
		switch strings.TrimSpace(name) {
		case "admit":
			l.Admit = d
		case "evict":
			l.Evict = d
		case "observe":
			l.Observe = d
		case "finish":
			l.Finish = d
		case "cycle":
			l.Cycle = d
		default:
			return l, fmt.Errorf("latency %q: unknown name %q (want admit, evict, observe, finish, cycle or stall)", part, name)
		}
	}
	return l, nil
}

func (l Latency) String() string {
	out := fmt.Sprintf("admit=%s,evict=%s,observe=%s,finish=%s,cycle=%s", l.Admit, l.Evict, l.Observe, l.Finish, l.Cycle)
	for _, s := range l.Stalls {
		out += fmt.Sprintf(",stall=%s+%s", s.Start, s.Duration)
	}
	return out
}
