package summary

import (
	"math"
	"slices"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
)

// Stats summarise a sample of durations, in seconds.
type Stats struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
}

// ClassLatency is the time to admission of one workload class.
//
// Both figures measure up to the workload's last admission, the one it
// ran to the end under; a workload evicted and admitted again counts its
// whole wait.
type ClassLatency struct {
	Class string `json:"class"`
	// Count is how many workloads of the class were admitted.
	Count int `json:"count"`
	// Stamped is the Admitted condition's lastTransitionTime minus the
	// creationTimestamp (both whole seconds), as Kueue's runner measures.
	Stamped Stats `json:"stamped"`
	// Observed runs from the harness sending the create request to the
	// harness seeing Admitted=True (sub-millisecond clock).
	Observed Stats `json:"observed"`
}

// timeToAdmission computes one row per class, in the order given.
func timeToAdmission(records []driver.Record, classes []string) []ClassLatency {
	stamped, observed := map[string][]float64{}, map[string][]float64{}
	for i := range records {
		r := &records[i]
		n := len(r.Admissions)
		if n == 0 {
			continue
		}
		last := r.Admissions[n-1]
		stamp := r.FinalAdmittedStamp
		if stamp.IsZero() {
			stamp = last.Stamped
		}
		if !stamp.IsZero() && !r.CreationTimestamp.IsZero() {
			stamped[r.Plan.Class] = append(stamped[r.Plan.Class], nonNegative(stamp.Sub(r.CreationTimestamp)))
		}
		if !r.CreateSent.IsZero() {
			observed[r.Plan.Class] = append(observed[r.Plan.Class], nonNegative(last.Observed.Sub(r.CreateSent)))
		}
	}
	out := make([]ClassLatency, 0, len(classes))
	for _, c := range classes {
		out = append(out, ClassLatency{Class: c, Count: max(len(stamped[c]), len(observed[c])),
			Stamped: stats(stamped[c]), Observed: stats(observed[c])})
	}
	return out
}

func nonNegative(d time.Duration) float64 { return max(d.Seconds(), 0) }

// stats computes the mean and nearest-rank percentiles of xs; all zero
// for an empty sample.
func stats(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	var sum float64
	for _, x := range sorted {
		sum += x
	}
	return Stats{Mean: sum / float64(len(sorted)), P50: Percentile(sorted, 50),
		P90: Percentile(sorted, 90), P99: Percentile(sorted, 99)}
}

// Percentile is the nearest-rank p-th percentile of an ascending sample:
// the smallest value with at least p percent of the sample at or below it.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	// p x n first, so that whole ranks stay exact (99 x 100 / 100 = 99).
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
