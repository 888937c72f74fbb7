package demo

import (
	"slices"
	"strings"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Frame is what one refresh of the live table shows.
type Frame struct {
	Elapsed   time.Duration
	Submitted int
	Total     int
	// Flavors are the GPU flavors, in the order the queues list them.
	Flavors     []string
	Queues      []QueueRow
	Preemptions Preemptions
}

// QueueRow is one ClusterQueue's line: workload counts from its status
// (pending, admitted), finished Workloads from the tracker, GPU use per
// flavor.
type QueueRow struct {
	Name     string
	Pending  int
	Admitted int
	Finished int
	GPUs     map[string]Usage
}

// Usage is a queue's GPUs in one flavor: in use (borrowed included), the
// borrowed part, and its nominal quota.
type Usage struct {
	Used, Borrowed, Nominal int64
}

// BuildFrame assembles a frame from the ClusterQueues and the tracker.
func BuildFrame(elapsed time.Duration, total int, cqs []kueue.ClusterQueue, t *Tracker) Frame {
	f := Frame{Elapsed: elapsed, Submitted: t.SubmittedCount(), Total: total, Preemptions: t.Preemptions()}
	finished := t.Finished()
	sorted := slices.Clone(cqs)
	slices.SortFunc(sorted, func(a, b kueue.ClusterQueue) int { return strings.Compare(a.Name, b.Name) })
	for i := range sorted {
		cq := &sorted[i]
		quota, order := gpuQuota(cq)
		used, borrowed := gpuUsage(cq)
		row := QueueRow{
			Name: cq.Name, Pending: int(cq.Status.PendingWorkloads), Admitted: int(cq.Status.AdmittedWorkloads),
			Finished: finished[cq.Name], GPUs: map[string]Usage{},
		}
		for _, fl := range order {
			if !slices.Contains(f.Flavors, fl) {
				f.Flavors = append(f.Flavors, fl)
			}
			row.GPUs[fl] = Usage{Used: used[fl], Borrowed: borrowed[fl], Nominal: quota[fl]}
		}
		f.Queues = append(f.Queues, row)
	}
	return f
}

// Capacity is the GPUs of a flavor over all queues' nominal quotas.
func (f Frame) Capacity(flavor string) int64 {
	var n int64
	for _, q := range f.Queues {
		n += q.GPUs[flavor].Nominal
	}
	return n
}

// InUse is the GPUs of a flavor in use over all queues.
func (f Frame) InUse(flavor string) int64 {
	var n int64
	for _, q := range f.Queues {
		n += q.GPUs[flavor].Used
	}
	return n
}
