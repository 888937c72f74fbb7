package why

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Render writes the explanation in plain words.
func Render(w io.Writer, ex *Explanation) error {
	var b strings.Builder
	head := fmt.Sprintf("Workload %s (priority %d)", ex.Workload, ex.Priority)
	switch ex.Status {
	case StatusFinished:
		fmt.Fprintf(&b, "%s has finished.\n", head)
	case StatusAdmitted:
		fmt.Fprintf(&b, "%s is admitted in ClusterQueue %s%s.\n", head, ex.ClusterQueue, flavorList(ex.Flavors))
	case StatusQuotaReserved:
		fmt.Fprintf(&b, "%s holds quota in ClusterQueue %s%s but is not admitted yet.\n", head, ex.ClusterQueue, flavorList(ex.Flavors))
	default:
		where := "LocalQueue " + ex.LocalQueue
		if ex.ClusterQueue != "" {
			where += ", ClusterQueue " + ex.ClusterQueue
		}
		fmt.Fprintf(&b, "%s is pending in %s.\n", head, where)
	}
	if ex.Ahead != nil {
		fmt.Fprintf(&b, "%s ahead of it in ClusterQueue %s", count(*ex.Ahead, "workload is", "workloads are"), ex.ClusterQueue)
		if ex.AheadInLocalQueue != nil {
			fmt.Fprintf(&b, " (%d of them in its LocalQueue)", *ex.AheadInLocalQueue)
		}
		b.WriteString(".\n")
	}
	if ex.FitsNow {
		fmt.Fprintf(&b, "It fits now%s: the scheduler admits it in its next cycle.\n", flavorList(ex.Flavors))
	}
	if len(ex.Blockers) > 0 {
		b.WriteString("\nWhy it waits:\n")
		for _, bl := range ex.Blockers {
			fmt.Fprintf(&b, "  - %s: %s\n", bl.Cause, bl.Message)
		}
	}
	if len(ex.Resources) > 0 {
		b.WriteString("\nResources:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  FLAVOR\tRESOURCE\tNEED\tNOMINAL\tUSED\tAVAILABLE\tBORROWING LIMIT\tHELD MOST BY")
		for _, r := range ex.Resources {
			limit := r.BorrowingLimit
			if limit == "" {
				limit = "-"
			}
			var hs []string
			for _, h := range r.Holders {
				hs = append(hs, fmt.Sprintf("%s (%s, priority %d)", h.Workload, h.Amount, h.Priority))
			}
			if len(hs) == 0 {
				hs = []string{"-"}
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Flavor, r.Resource, r.Need, r.Nominal, r.Used, r.Available, limit, strings.Join(hs, ", "))
		}
		tw.Flush()
	}
	if p := ex.Preemption; p != nil {
		if p.Possible {
			fmt.Fprintf(&b, "\nPreemption: it preempts %s.\n", strings.Join(p.Victims, ", "))
		} else {
			fmt.Fprintf(&b, "\nPreemption: %s.\n", p.Message)
		}
	}
	if e := ex.Estimate; e != nil {
		switch {
		case !e.Known && strings.HasPrefix(e.Assumption, "no estimate"):
			fmt.Fprintf(&b, "\nEstimate: %s.\n", e.Assumption)
		case e.Known && e.Seconds < 1:
			b.WriteString("\nEstimate: it starts in less than a second.\n")
		case e.Known:
			fmt.Fprintf(&b, "\nEstimate: it starts in about %s (at %s).\n", e.StartsIn, e.At.Format(time.RFC3339))
		default:
			fmt.Fprintf(&b, "\nEstimate: it does not start within %s of simulated time.\n", horizon)
		}
		if e.Known || !strings.HasPrefix(e.Assumption, "no estimate") {
			fmt.Fprintf(&b, "  Assuming %s.\n", e.Assumption)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func flavorList(fl map[string]string) string {
	if len(fl) == 0 {
		return ""
	}
	keys := make([]string, 0, len(fl))
	for r := range fl {
		keys = append(keys, r)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, r := range keys {
		parts[i] = r + " in " + fl[r]
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
