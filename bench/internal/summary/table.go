package summary

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kuota-dev/kuota/bench/internal/auditlog"
	"github.com/kuota-dev/kuota/internal/report"
)

// maxPrintedViolations bounds the audit messages the table shows; the
// summary file keeps them all.
const maxPrintedViolations = 20

// Render prints the summary as text tables.
func Render(w io.Writer, s *Summary) error {
	p := &printer{w: w}
	state := "completed"
	if !s.Completed {
		state = "INCOMPLETE"
	}
	p.linef("Scenario %s: %s; %d workloads: %d created, %d admitted, %d finished; %d admissions, %d evictions (%d of finished workloads)",
		s.Scenario, state, s.Workloads, s.Created, s.Admitted, s.Finished, s.Admissions, s.Evictions, s.EvictionsAfterFinish)
	if len(s.EvictionsByReason) > 0 {
		p.linef("Evictions: %.3f per workload; by reason: %s", s.EvictionsPerWorkload, report.Counts(s.EvictionsByReason))
	}
	p.linef("Wall time %.2f s (start of the schedule to the last finish); creations late by %.1f ms on average, %.1f ms at most",
		s.WallSeconds, s.CreateLagMeanMs, s.CreateLagMaxMs)
	if r := s.Replay; r != nil {
		p.linef("Replayed in the simulator (fitted latency, %d seeds): mean time to admission %.2f s (live %.2f s), evictions %.1f, %d to %d (live %d)",
			r.Seeds, r.SimulatedMeanSeconds, s.MeanObservedTimeToAdmission(), r.SimulatedEvictions, r.SimulatedEvictionsMin, r.SimulatedEvictionsMax, s.Evictions)
	}
	p.linef("")
	p.table([]string{"time to admission (s)", "admitted", "stamped mean", "p50", "p90", "p99", "observed mean", "p50", "p90", "p99"},
		latencyRows(s.TimeToAdmission))
	p.linef("")
	p.table([]string{"ClusterQueue class", "queues", "usage % of nominal (admissions)", "(status)"}, usageRows(s.Usage))
	p.linef("")
	p.table([]string{"process", "CPU s (life)", "CPU s (run)", "peak RSS MiB"}, processRows(s))
	if m := s.Machine; m != nil {
		p.linef("Machine during the run: %.1f CPU s busy of %d CPUs (%.0f%%), load average %.2f at the end",
			m.BusyCPUSeconds, m.CPUs, m.BusyPercent, m.LoadAverage)
	}
	if s.TerminatedWatchers != nil {
		p.linef("Watchers the API server closed for falling behind: %s", watcherCounts(s.TerminatedWatchers))
	}
	p.linef("")
	p.writes(s.Writes)
	d := s.Driver
	p.linef("Harness writes: %d creates, %d finishes, %d clears, %d conflicts, %d errors",
		d.Creates, d.Finishes, d.Clears, d.Conflicts, d.Errors)
	p.linef("")
	p.audit(s.Audit)
	for _, pr := range s.Problems {
		p.linef("PROBLEM: %s", pr)
	}
	if len(s.Targets) > 0 {
		p.linef("")
		p.table([]string{"target", "limit", "actual", "result"}, targetRows(s.Targets))
	}
	return p.err
}

// printer writes lines and tables, keeping the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) linef(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

func (p *printer) table(header []string, rows [][]string) {
	if p.err != nil {
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	p.err = tw.Flush()
}

func latencyRows(ls []ClassLatency) [][]string {
	var rows [][]string
	for _, l := range ls {
		rows = append(rows, []string{l.Class, fmt.Sprint(l.Count),
			secs(l.Stamped.Mean), secs(l.Stamped.P50), secs(l.Stamped.P90), secs(l.Stamped.P99),
			secs(l.Observed.Mean), secs(l.Observed.P50), secs(l.Observed.P90), secs(l.Observed.P99)})
	}
	return rows
}

func usageRows(us []ClassUsage) [][]string {
	var rows [][]string
	for _, u := range us {
		rows = append(rows, []string{u.Class, fmt.Sprint(u.Queues), fmt.Sprintf("%.1f", u.FromAdmissions), fmt.Sprintf("%.1f", u.FromStatus)})
	}
	return rows
}

func processRows(s *Summary) [][]string {
	row := func(name string, p Process) []string {
		return []string{name, secs(p.CPUSeconds), secs(p.RunCPUSeconds), fmt.Sprintf("%.0f", p.PeakRSSMiB)}
	}
	rows := [][]string{row("kuota-manager", s.Manager)}
	if s.APIServer != nil {
		rows = append(rows, row("kube-apiserver", *s.APIServer))
	}
	if s.Etcd != nil {
		rows = append(rows, row("etcd", *s.Etcd))
	}
	return rows
}

func (p *printer) writes(w *Writes) {
	if w == nil {
		p.linef("Manager writes: unknown (no audit log)")
		return
	}
	p.linef("Manager writes: %.2f per workload, %.2f accepted (%d to workloads and workloads/status); %d to clusterqueues/status; %d other; %d in all, %d refused",
		w.PerWorkload, w.AcceptedPerWorkload, w.WorkloadWrites, w.ClusterQueueStatus, w.Other, w.Total, w.Failed)
	var rows [][]string
	for _, k := range auditlog.SortedResources(w.ByResource) {
		rw := w.ByResource[k]
		var verbs []string
		for _, v := range slices.Sorted(maps.Keys(rw.ByVerb)) {
			verbs = append(verbs, fmt.Sprintf("%s %d", v, rw.ByVerb[v]))
		}
		rows = append(rows, []string{k, fmt.Sprint(rw.Writes), fmt.Sprint(rw.Failed), strings.Join(verbs, ", ")})
	}
	p.table([]string{"resource", "writes", "refused", "by verb"}, rows)
}

func (p *printer) audit(a *Audit) {
	switch {
	case a == nil:
		p.linef("Audit: not run")
	case a.Error != "":
		p.linef("Audit: FAILED to run: %s", a.Error)
	case a.Violations == 0:
		p.linef("Audit: no violations")
	default:
		p.linef("Audit: FAILED with %d violation(s)", a.Violations)
		for i, m := range a.Messages {
			if i == maxPrintedViolations {
				p.linef("  ... and %d more (see summary.yaml)", len(a.Messages)-i)
				break
			}
			p.linef("  %s", m)
		}
	}
}

func targetRows(cs []Check) [][]string {
	var rows [][]string
	for _, c := range cs {
		result, actual := "MISS", "n/a"
		if c.Pass {
			result = "PASS"
		}
		if c.Measured {
			actual = fmt.Sprintf("%.2f", c.Actual)
		}
		rows = append(rows, []string{c.Target, fmt.Sprintf("%s %g", c.Op, c.Limit), actual, result})
	}
	return rows
}

func secs(x float64) string { return fmt.Sprintf("%.2f", x) }

// watcherCounts lists per-resource counts in resource order, or "none".
func watcherCounts(m map[string]int64) string {
	if out := report.Counts(m); out != "" {
		return out
	}
	return "none"
}
