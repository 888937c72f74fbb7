package summary

import (
	"slices"
	"sort"

	"github.com/kuota-dev/kuota/internal/scenario"
)

// Comparison directions of a target.
const (
	AtMost  = "<="
	AtLeast = ">="
)

// Check is one target compared with what the run measured. A missed target
// is reported, never an error: timings depend on the machine.
type Check struct {
	// Target names the figure, e.g. "mean time to admission small (s)".
	Target string  `json:"target"`
	Op     string  `json:"op"`
	Limit  float64 `json:"limit"`
	Actual float64 `json:"actual"`
	// Measured is false when the run produced no such figure (then the
	// target is missed).
	Measured bool `json:"measured"`
	Pass     bool `json:"pass"`
}

func newCheck(target, op string, limit, actual float64, measured bool) Check {
	c := Check{Target: target, Op: op, Limit: limit, Actual: actual, Measured: measured}
	if measured {
		if op == AtMost {
			c.Pass = actual <= limit
		} else {
			c.Pass = actual >= limit
		}
	}
	return c
}

// checkTargets compares the summary with the targets: wall time, usage
// from ClusterQueue status per queue class, stamped mean time to admission
// per workload class, and the manager's writes per workload.
func checkTargets(t *scenario.Targets, s *Summary) []Check {
	if t == nil {
		return nil
	}
	var out []Check
	if t.MaxWallSeconds > 0 {
		out = append(out, newCheck("wall time (s)", AtMost, t.MaxWallSeconds, s.WallSeconds, s.Completed))
	}
	if t.MinUsagePercent > 0 {
		for _, u := range s.Usage {
			out = append(out, newCheck("usage "+u.Class+" (% of nominal, status)", AtLeast, t.MinUsagePercent, u.FromStatus, s.Completed))
		}
	}
	classes := make([]string, 0, len(t.MaxMeanTimeToAdmissionSeconds))
	for c := range t.MaxMeanTimeToAdmissionSeconds {
		classes = append(classes, c)
	}
	// Classes of the run in its order, then any others by name.
	sort.Slice(classes, func(i, j int) bool {
		a, b := classIndex(s, classes[i]), classIndex(s, classes[j])
		if a != b {
			return a < b
		}
		return classes[i] < classes[j]
	})
	for _, c := range classes {
		limit := t.MaxMeanTimeToAdmissionSeconds[c]
		i := classIndex(s, c)
		measured := i < len(s.TimeToAdmission) && s.TimeToAdmission[i].Count > 0
		var actual float64
		if measured {
			actual = s.TimeToAdmission[i].Stamped.Mean
		}
		out = append(out, newCheck("mean time to admission "+c+" (s, stamped)", AtMost, limit, actual, measured))
	}
	if t.MaxEvictionsPerWorkload != nil {
		out = append(out, newCheck("evictions per workload", AtMost, *t.MaxEvictionsPerWorkload, s.EvictionsPerWorkload, s.Completed))
	}
	if t.MaxManagerWritesPerWorkload > 0 {
		var actual float64
		if s.Writes != nil {
			actual = s.Writes.PerWorkload
		}
		out = append(out, newCheck("manager writes per workload", AtMost, t.MaxManagerWritesPerWorkload, actual, s.Writes != nil))
	}
	return out
}

// classIndex is the position of a workload class in the summary's rows,
// or the number of rows when absent.
func classIndex(s *Summary, class string) int {
	i := slices.IndexFunc(s.TimeToAdmission, func(c ClassLatency) bool { return c.Class == class })
	if i < 0 {
		return len(s.TimeToAdmission)
	}
	return i
}
