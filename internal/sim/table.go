package sim

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kuota-dev/kuota/internal/report"
)

// Render prints a summary as tables.
func Render(w io.Writer, s *Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(tw, format, args...) }
	p("workloads\t%d (%d finished)\n", s.Workloads, s.Finished)
	p("wall (virtual)\t%.1f s\n", s.WallSeconds)
	p("usage\t%.1f%%\n", s.UsagePercent)
	p("admissions\t%d\n", s.Admissions)
	p("evictions\t%d (%.3f per workload)%s\n", s.Evictions, s.EvictionsPerWorkload, byReason(s.EvictionsByReason))
	p("cycles\t%d\n", s.Cycles)
	p("latency model\t%s (seed %d)\n", s.Latency, s.Seed)
	p("simulated in\t%.2f s\n", s.RunSeconds)
	p("\n")
	p("class\tworkloads\tmean TTA s\tp50\tp90\tp99\tmax\n")
	for _, l := range s.TimeToAdmission {
		p("%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", l.Class, l.Count, l.Mean, l.P50, l.P90, l.P99, l.Max)
	}
	p("\n")
	p("queue class\tqueues\tusage\n")
	for _, u := range s.Usage {
		p("%s\t%d\t%.1f%%\n", u.Class, u.Queues, u.UsagePercent)
	}
	return tw.Flush()
}

func byReason(m map[string]int) string {
	if out := report.Counts(m); out != "" {
		return ": " + out
	}
	return ""
}
