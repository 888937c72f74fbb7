package demo

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// maxNamesShown caps the list of unfinished Jobs in the summary.
const maxNamesShown = 8

// Waits are the waits from a Workload's creation to its first admission.
type Waits struct {
	Count      int
	Total, Max time.Duration
}

// add counts one wait; a negative wait (clock skew) counts as zero.
func (w *Waits) add(d time.Duration) {
	d = max(d, 0)
	w.Count++
	w.Total += d
	w.Max = max(w.Max, d)
}

// Mean is the average wait, zero when there is none.
func (w Waits) Mean() time.Duration {
	if w.Count == 0 {
		return 0
	}
	return w.Total / time.Duration(w.Count)
}

// Summary is the end-of-run report.
type Summary struct {
	Submitted int
	Finished  int
	// Unfinished names the Jobs whose Workload did not finish.
	Unfinished []string
	// All are the waits of every admitted Workload; ByPriority by
	// priority class.
	All         Waits
	ByPriority  map[string]Waits
	Preemptions Preemptions
	// PeakGPUs is the most GPUs in use at once, of CapacityGPUs;
	// PeakBorrowed the most each queue borrowed at once.
	PeakGPUs     int64
	CapacityGPUs int64
	PeakBorrowed map[string]int64
	// Stream is the time from the first submission to the end; Total the
	// whole run, cluster start included.
	Stream, Total time.Duration
}

// Summary sums up what the tracker saw.
func (t *Tracker) Summary(capacity int64) Summary {
	s := Summary{
		Submitted: len(t.jobs), ByPriority: map[string]Waits{},
		Preemptions: t.Preemptions(), PeakGPUs: t.peakGPUs, CapacityGPUs: capacity,
		PeakBorrowed: t.peakBorrowed,
	}
	finished := map[string]bool{}
	for _, r := range t.workloads {
		if r.finished {
			s.Finished++
			finished[r.job.key()] = true
		}
		if r.admitted.IsZero() {
			continue
		}
		wait := r.admitted.Sub(r.created)
		s.All.add(wait)
		w := s.ByPriority[r.job.Priority]
		w.add(wait)
		s.ByPriority[r.job.Priority] = w
	}
	for _, j := range t.jobs {
		if !finished[j.key()] {
			s.Unfinished = append(s.Unfinished, j.key())
		}
	}
	slices.Sort(s.Unfinished)
	return s
}

// Lines renders the summary.
func (s Summary) Lines() []string {
	lines := []string{"Summary"}
	add := func(label, format string, args ...any) {
		lines = append(lines, fmt.Sprintf("  %-12s %s", label, fmt.Sprintf(format, args...)))
	}
	add("jobs", "%d submitted, %d finished", s.Submitted, s.Finished)
	if n := len(s.Unfinished); n > 0 {
		names := strings.Join(s.Unfinished[:min(n, maxNamesShown)], ", ")
		if n > maxNamesShown {
			names += fmt.Sprintf(" and %d more", n-maxNamesShown)
		}
		add("", "not finished: %s", names)
	}
	add("wait", "mean %s, max %s from creation to admission", seconds(s.All.Mean()), seconds(s.All.Max))
	var parts []string
	for _, p := range []string{PriorityHigh, PriorityLow} {
		if w, ok := s.ByPriority[p]; ok && w.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s priority mean %s, max %s (%s)", p, seconds(w.Mean()), seconds(w.Max), plural(w.Count, "job", "jobs")))
		}
	}
	if len(parts) > 0 {
		add("", "%s", strings.Join(parts, "; "))
	}
	add("preemptions", "%s", s.Preemptions.describe())
	add("GPUs", "peak %d of %d in use; most borrowed at once: %s", s.PeakGPUs, s.CapacityGPUs, borrowedList(s.PeakBorrowed))
	add("elapsed", "%s in all, %s from the first job to the end", seconds(s.Total), seconds(s.Stream))
	return lines
}

// describe words the preemptions for the summary.
func (p Preemptions) describe() string {
	if p.Total == 0 {
		return "none"
	}
	var parts []string
	if p.InQueue > 0 {
		parts = append(parts, fmt.Sprintf("%d by a higher-priority job of the same team", p.InQueue))
	}
	if p.Reclaim > 0 {
		parts = append(parts, fmt.Sprintf("%d to give a team back the quota it lent", p.Reclaim))
	}
	if p.Other > 0 {
		parts = append(parts, fmt.Sprintf("%d not seen in detail", p.Other))
	}
	return fmt.Sprintf("%d: %s", p.Total, strings.Join(parts, ", "))
}

func borrowedList(peaks map[string]int64) string {
	if len(peaks) == 0 {
		return "none"
	}
	names := make([]string, 0, len(peaks))
	for n := range peaks {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, peaks[n]))
	}
	return strings.Join(parts, ", ")
}

// seconds formats a duration to a tenth of a second below a minute,
// e.g. 7.3s or 1m32s.
func seconds(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
