// Package top renders the live table of `kuota top` (and `kubectl kuota
// top`): every ClusterQueue and LocalQueue with its pending, reserving and
// admitted workloads and, per flavor and resource, the quota in use against
// the nominal quota, with the borrowed part. It reads only the queues'
// status, as the manager writes it, so it works against any cluster that
// runs Kuota or Kueue.
package top

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Snapshot is what one refresh shows.
type Snapshot struct {
	ClusterQueues []kueue.ClusterQueue
	LocalQueues   []kueue.LocalQueue
}

// Render writes the two tables of a snapshot: ClusterQueues, then
// LocalQueues, sorted by name. A queue with several flavors or resources
// takes one line for each, its counts on the first.
func Render(w io.Writer, s Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTERQUEUE\tCOHORT\tPENDING\tRESERVING\tADMITTED\tFLAVOR\tRESOURCE\tUSAGE\tNOMINAL\tBORROWED")
	cqs := slices.Clone(s.ClusterQueues)
	slices.SortFunc(cqs, func(a, b kueue.ClusterQueue) int { return strings.Compare(a.Name, b.Name) })
	for i := range cqs {
		cq := &cqs[i]
		head := fmt.Sprintf("%s\t%s\t%d\t%d\t%d", cq.Name, orDash(string(cq.Spec.CohortName)),
			cq.Status.PendingWorkloads, cq.Status.ReservingWorkloads, cq.Status.AdmittedWorkloads)
		rows(tw, head, clusterQueueLines(cq), 5)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "NAMESPACE\tLOCALQUEUE\tCLUSTERQUEUE\tPENDING\tRESERVING\tADMITTED\tFLAVOR\tRESOURCE\tUSAGE")
	lqs := slices.Clone(s.LocalQueues)
	slices.SortFunc(lqs, func(a, b kueue.LocalQueue) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	for i := range lqs {
		lq := &lqs[i]
		head := fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%d", lq.Namespace, lq.Name, lq.Spec.ClusterQueue,
			lq.Status.PendingWorkloads, lq.Status.ReservingWorkloads, lq.Status.AdmittedWorkloads)
		rows(tw, head, localQueueLines(lq), 3)
	}
	return tw.Flush()
}

// rows writes a queue's lines: its head columns on the first, blank ones
// on the others; a queue without lines gets one of width dashes.
func rows(w io.Writer, head string, lines []string, width int) {
	if len(lines) == 0 {
		lines = []string{strings.TrimSuffix(strings.Repeat("-\t", width), "\t")}
	}
	blank := strings.Repeat("\t", strings.Count(head, "\t"))
	for i, l := range lines {
		if i > 0 {
			head = blank
		}
		fmt.Fprintf(w, "%s\t%s\n", head, l)
	}
}

// clusterQueueLines are a ClusterQueue's flavor and resource columns: every
// resource of its quota, with what its admitted workloads use.
func clusterQueueLines(cq *kueue.ClusterQueue) []string {
	type key struct{ flavor, res string }
	used := map[key]kueue.ResourceUsage{}
	for _, f := range cq.Status.FlavorsUsage {
		for _, r := range f.Resources {
			used[key{string(f.Name), string(r.Name)}] = r
		}
	}
	var out []string
	for _, rg := range cq.Spec.ResourceGroups {
		for _, f := range rg.Flavors {
			for _, r := range f.Resources {
				u := used[key{string(f.Name), string(r.Name)}]
				out = append(out, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", f.Name, r.Name,
					quantity(u.Total), quantity(r.NominalQuota), quantity(u.Borrowed)))
			}
		}
	}
	return out
}

// localQueueLines are a LocalQueue's flavor and resource columns: what its
// admitted workloads use, per flavor and resource.
func localQueueLines(lq *kueue.LocalQueue) []string {
	var out []string
	for _, f := range lq.Status.FlavorsUsage {
		for _, r := range f.Resources {
			out = append(out, fmt.Sprintf("%s\t%s\t%s", f.Name, r.Name, quantity(r.Total)))
		}
	}
	return out
}

func quantity(q resource.Quantity) string {
	if q.IsZero() {
		return "0"
	}
	return q.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
