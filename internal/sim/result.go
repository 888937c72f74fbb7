package sim

import (
	"math"
	"slices"
	"time"

	"github.com/kuota-dev/kuota/internal/plots"
)

// Result is what a simulation measured.
type Result struct {
	Summary Summary
	// Workloads holds each workload's history, in trace order.
	Workloads []WorkloadResult
	// Usage is each class of ClusterQueues' usage over time.
	Usage []plots.Series
}

// TimesToAdmission returns, per class (in the summary's order), each
// admitted workload's time to admission in seconds.
func (r *Result) TimesToAdmission() map[string][]float64 {
	out := map[string][]float64{}
	for _, w := range r.Workloads {
		if n := len(w.Admissions); n > 0 {
			out[w.Class] = append(out[w.Class], (w.Admissions[n-1].Decided - w.Arrive).Seconds())
		}
	}
	return out
}

// WorkloadResult is one workload's history.
type WorkloadResult struct {
	Namespace, Name, Class string
	Arrive                 time.Duration
	Admissions             []admission
	// Evictions holds the reason of each preemption it suffered.
	Evictions []string
	// Finished is when it finished (0: it did not).
	Finished time.Duration
}

// Summary holds the figures kuota-bench prints, from a simulation.
type Summary struct {
	Workloads int `json:"workloads"`
	Finished  int `json:"finished"`
	// WallSeconds is the virtual time from the first arrival to the last
	// finish.
	WallSeconds     float64        `json:"wallSeconds"`
	TimeToAdmission []ClassLatency `json:"timeToAdmission"`
	Usage           []ClassUsage   `json:"usage"`
	// UsagePercent is the usage over all classes.
	UsagePercent         float64        `json:"usagePercent"`
	Admissions           int            `json:"admissions"`
	Evictions            int            `json:"evictions"`
	EvictionsPerWorkload float64        `json:"evictionsPerWorkload"`
	EvictionsByReason    map[string]int `json:"evictionsByReason"`
	Cycles               int            `json:"cycles"`
	Latency              string         `json:"latency"`
	Seed                 uint64         `json:"seed"`
	// RunSeconds is how long the simulation took (real time).
	RunSeconds float64 `json:"runSeconds"`
}

// ClassLatency is the time to admission (from creation to the last
// admission) of one class of workloads, in seconds.
type ClassLatency struct {
	Class string  `json:"class"`
	Count int     `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

func (e *engine) result(took time.Duration) *Result {
	res := &Result{Workloads: make([]WorkloadResult, 0, len(e.order))}
	s := &res.Summary
	s.Workloads, s.Cycles, s.Latency, s.Seed = len(e.order), e.cycles, e.opts.Latency.Describe(), e.opts.Seed
	s.EvictionsByReason = map[string]int{}
	tta := map[string][]float64{}
	var classes []string
	end := time.Duration(0)
	for _, r := range e.order {
		class := r.w.Class
		if class == "" {
			class = string(r.w.Queue)
		}
		if _, ok := tta[class]; !ok {
			tta[class] = nil
			classes = append(classes, class)
		}
		wr := WorkloadResult{Namespace: r.w.Namespace, Name: r.w.Name, Class: class, Arrive: r.w.Arrive,
			Admissions: r.admissions, Evictions: r.evictions, Finished: r.finished}
		res.Workloads = append(res.Workloads, wr)
		s.Admissions += len(r.admissions)
		s.Evictions += len(r.evictions)
		for _, reason := range r.evictions {
			s.EvictionsByReason[reason]++
		}
		if n := len(r.admissions); n > 0 {
			tta[class] = append(tta[class], (r.admissions[n-1].Decided - r.w.Arrive).Seconds())
		}
		if r.phase == done {
			s.Finished++
			end = max(end, r.finished)
		}
	}
	if e.opts.Deadline > 0 && s.Finished < s.Workloads {
		end = e.now
	}
	e.usage.advance(end)
	s.WallSeconds = end.Seconds()
	s.Usage = e.usage.figures(end)
	res.Usage = e.usage.series(2000)
	s.UsagePercent = e.usage.total(end)
	if s.Workloads > 0 {
		s.EvictionsPerWorkload = float64(s.Evictions) / float64(s.Workloads)
	}
	for _, c := range classes {
		s.TimeToAdmission = append(s.TimeToAdmission, latencyOf(c, tta[c]))
	}
	s.RunSeconds = took.Seconds()
	return res
}

// total is the usage over every class.
func (m *usageMeter) total(end time.Duration) float64 {
	var area, nominal float64
	for _, c := range m.classes {
		area += c.area
		nominal += float64(c.nominal)
	}
	if capacity := nominal * end.Seconds(); capacity > 0 {
		return 100 * area / capacity
	}
	return 0
}

func latencyOf(class string, xs []float64) ClassLatency {
	out := ClassLatency{Class: class, Count: len(xs)}
	if len(xs) == 0 {
		return out
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	out.Mean = sum / float64(len(xs))
	out.P50, out.P90, out.P99 = percentile(xs, 50), percentile(xs, 90), percentile(xs, 99)
	out.Max = xs[len(xs)-1]
	return out
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
