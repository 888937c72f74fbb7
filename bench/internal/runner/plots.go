package runner

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/bench/internal/summary"
	"github.com/kuota-dev/kuota/internal/plots"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Plot files written into the results folder.
const (
	UsagePlot = "usage.svg"
	TTAPlot   = "time-to-admission.svg"
)

// writePlots draws the run's usage per class of ClusterQueues over time
// (from their status, as the harness saw it) and the times to admission
// per class (stamped, as the summary counts them), with Kueue's means when
// the targets file has them.
func writePlots(dir string, s *summary.Summary, res *driver.Result, ref *scenario.Reference) error {
	if err := plots.WriteUsage(filepath.Join(dir, UsagePlot), "Quota usage: "+s.Scenario, usageSeries(res)); err != nil {
		return err
	}
	times := map[string][]float64{}
	for i := range res.Records {
		r := &res.Records[i]
		if n := len(r.Admissions); n > 0 && !r.CreationTimestamp.IsZero() {
			stamp := r.FinalAdmittedStamp
			if stamp.IsZero() {
				stamp = r.Admissions[n-1].Stamped
			}
			times[r.Plan.Class] = append(times[r.Plan.Class], max(0, stamp.Sub(r.CreationTimestamp).Seconds()))
		}
	}
	var dists []plots.Distribution
	for _, l := range s.TimeToAdmission {
		d := plots.Distribution{Class: l.Class, Values: times[l.Class]}
		if ref != nil {
			if m, ok := ref.MeanTimeToAdmissionSeconds[l.Class]; ok {
				d.KueueMean = &m
			}
		}
		dists = append(dists, d)
	}
	return plots.WriteTimeToAdmission(filepath.Join(dir, TTAPlot), "Time to admission: "+s.Scenario, dists)
}

// usageSeries sums the ClusterQueues of each class: usage over time as a
// percentage of the class's nominal quota.
func usageSeries(res *driver.Result) []plots.Series {
	type change struct {
		at    time.Time
		delta int64
	}
	byClass := map[string][]change{}
	nominal := map[string]int64{}
	var order []string
	for _, q := range res.Queues {
		if _, ok := nominal[q.Class]; !ok {
			order = append(order, q.Class)
		}
		nominal[q.Class] += q.NominalMilli
		prev := int64(0)
		for _, smp := range q.Samples {
			byClass[q.Class] = append(byClass[q.Class], change{at: smp.At, delta: smp.Milli - prev})
			prev = smp.Milli
		}
	}
	out := make([]plots.Series, 0, len(order))
	for _, class := range order {
		changes := byClass[class]
		slices.SortStableFunc(changes, func(a, b change) int { return a.at.Compare(b.at) })
		var pts []plots.Point
		level := int64(0)
		for _, c := range changes {
			level += c.delta
			if nominal[class] > 0 {
				pts = append(pts, plots.Point{T: max(0, c.at.Sub(res.Start).Seconds()), V: 100 * float64(level) / float64(nominal[class])})
			}
		}
		out = append(out, plots.Series{Name: class, Points: plots.Downsample(pts, 2000)})
	}
	return out
}
