package summary

import (
	"time"

	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// ClassUsage is the mean CPU usage of one ClusterQueue class over the run,
// as a percentage of the class's nominal quota (borrowing can take it past
// 100).
//
// The window runs from the first create request to the end of the run (the
// last finish). FromAdmissions integrates, per admission the harness saw,
// the workload's request from the moment it saw Admitted=True to the
// moment it saw the quota given back (finished or reservation cleared).
// FromStatus integrates the CPU in each ClusterQueue's
// status.flavorsUsage, as a step function of the values the harness saw.
// Both are divided by the sum of the class's nominal quotas times the
// window.
type ClassUsage struct {
	Class          string  `json:"class"`
	Queues         int     `json:"queues"`
	FromAdmissions float64 `json:"fromAdmissionsPercent"`
	FromStatus     float64 `json:"fromStatusPercent"`
}

// usageTotals accumulate a class's CPU x time, in milli-CPU seconds.
type usageTotals struct {
	queues           int
	nominalMilli     int64
	admitted, status float64
}

func usage(plan *scenario.Plan, res *driver.Result) []ClassUsage {
	start, end := window(res)
	classOf := map[string]string{}
	totals := map[string]*usageTotals{}
	var order []string
	for _, q := range plan.Queues {
		classOf[q.Name] = q.Class
		t := totals[q.Class]
		if t == nil {
			t = &usageTotals{}
			totals[q.Class] = t
			order = append(order, q.Class)
		}
		t.queues++
		t.nominalMilli += q.Nominal.MilliValue()
	}
	for i := range res.Records {
		r := &res.Records[i]
		milli := float64(r.Plan.TotalMilli())
		for _, a := range r.Admissions {
			t := totals[classOf[a.ClusterQueue]]
			if t == nil {
				continue
			}
			to := a.Released
			if to.IsZero() {
				to = end
			}
			t.admitted += milli * overlap(a.Observed, to, start, end)
		}
	}
	for _, q := range res.Queues {
		if t := totals[classOf[q.Name]]; t != nil {
			t.status += integrate(q.Samples, start, end)
		}
	}
	span := end.Sub(start).Seconds()
	out := make([]ClassUsage, 0, len(order))
	for _, c := range order {
		t := totals[c]
		u := ClassUsage{Class: c, Queues: t.queues}
		if capacity := float64(t.nominalMilli) * span; capacity > 0 {
			u.FromAdmissions = 100 * t.admitted / capacity
			u.FromStatus = 100 * t.status / capacity
		}
		out = append(out, u)
	}
	return out
}

// window is the span usage is averaged over: from the first create
// request to the end of the run.
func window(res *driver.Result) (time.Time, time.Time) {
	start := res.Start
	first := time.Time{}
	for i := range res.Records {
		if s := res.Records[i].CreateSent; !s.IsZero() && (first.IsZero() || s.Before(first)) {
			first = s
		}
	}
	if !first.IsZero() {
		start = first
	}
	return start, res.End
}

// overlap is how many seconds [from, to) and [start, end) share.
func overlap(from, to, start, end time.Time) float64 {
	if from.Before(start) {
		from = start
	}
	if to.After(end) {
		to = end
	}
	if !to.After(from) {
		return 0
	}
	return to.Sub(from).Seconds()
}

// integrate is the integral over [start, end) of the step function that
// takes each sample's value from its instant on (zero before the first),
// in value x seconds.
func integrate(samples []driver.UsageSample, start, end time.Time) float64 {
	var total float64
	level, at := int64(0), start
	for _, s := range samples {
		if !s.At.After(start) {
			level = s.Milli
			continue
		}
		if !s.At.Before(end) {
			break
		}
		total += float64(level) * s.At.Sub(at).Seconds()
		level, at = s.Milli, s.At
	}
	if end.After(at) {
		total += float64(level) * end.Sub(at).Seconds()
	}
	return total
}
