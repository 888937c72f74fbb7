package demo

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Tracker remembers, across polls, what the demo learnt about its Jobs'
// Workloads and the ClusterQueues: first admission times, finishes,
// preemptions and peaks. It is not safe for concurrent use.
type Tracker struct {
	// jobs are the submitted Jobs by UID: a Workload left over from an
	// earlier run's Job of the same name is not counted.
	jobs      map[types.UID]JobSpec
	workloads map[types.UID]*record
	// peakGPUs is the most GPUs in use at one poll, over all queues;
	// peakBorrowed the most GPUs each queue borrowed at one poll.
	peakGPUs     int64
	peakBorrowed map[string]int64
}

// record is what is known about one Workload of a submitted Job.
type record struct {
	job      JobSpec
	created  time.Time
	admitted time.Time // first Admitted=True seen; zero before
	finished bool
	// preemptions counts the Workload's evictions by preemption
	// (schedulingStats); byReason counts the Preempted conditions seen, by
	// reason, each transition once.
	preemptions int
	byReason    map[string]int
	seen        map[time.Time]bool
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker {
	return &Tracker{
		jobs:         map[types.UID]JobSpec{},
		workloads:    map[types.UID]*record{},
		peakBorrowed: map[string]int64{},
	}
}

// Submitted records that j was created as the Job with the given UID.
func (t *Tracker) Submitted(j JobSpec, uid types.UID) {
	t.jobs[uid] = j
}

// SubmittedCount is the number of Jobs created so far.
func (t *Tracker) SubmittedCount() int { return len(t.jobs) }

// ObserveWorkloads updates the records from a list of Workloads; those of
// other Jobs are ignored.
func (t *Tracker) ObserveWorkloads(wls []kueue.Workload) {
	for i := range wls {
		wl := &wls[i]
		job, ok := t.jobOf(wl)
		if !ok {
			continue
		}
		r := t.workloads[wl.UID]
		if r == nil {
			r = &record{job: job, created: wl.CreationTimestamp.Time, byReason: map[string]int{}, seen: map[time.Time]bool{}}
			t.workloads[wl.UID] = r
		}
		r.observe(wl)
	}
}

// jobOf finds the submitted Job that owns wl.
func (t *Tracker) jobOf(wl *kueue.Workload) (JobSpec, bool) {
	for _, ref := range wl.OwnerReferences {
		if ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
			continue
		}
		if j, ok := t.jobs[ref.UID]; ok {
			return j, true
		}
	}
	return JobSpec{}, false
}

func (r *record) observe(wl *kueue.Workload) {
	conds := wl.Status.Conditions
	if c := apimeta.FindStatusCondition(conds, kueue.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue && r.admitted.IsZero() {
		r.admitted = c.LastTransitionTime.Time
	}
	// Finished is final; an older version (a watch event behind a list)
	// does not undo it.
	r.finished = r.finished || apimeta.IsStatusConditionTrue(conds, kueue.WorkloadFinished)
	if c := apimeta.FindStatusCondition(conds, kueue.WorkloadPreempted); c != nil && c.Status == metav1.ConditionTrue {
		if at := c.LastTransitionTime.Time; !r.seen[at] {
			r.seen[at] = true
			r.byReason[c.Reason]++
		}
	}
	if s := wl.Status.SchedulingStats; s != nil {
		n := 0
		for _, e := range s.Evictions {
			if e.Reason == kueue.WorkloadEvictedByPreemption {
				n += int(e.Count)
			}
		}
		r.preemptions = max(r.preemptions, n)
	}
}

// ObserveQueues updates the peaks from the ClusterQueues' status. Each
// queue's status is written on its own, so for a moment quota that moved
// from one queue to the other (a reclaim) can be counted in both: the use of
// a flavor is capped at the quota the queues have in it.
func (t *Tracker) ObserveQueues(cqs []kueue.ClusterQueue) {
	inUse, capacity := map[string]int64{}, map[string]int64{}
	for i := range cqs {
		used, borrowed := gpuUsage(&cqs[i])
		quota, _ := gpuQuota(&cqs[i])
		var b int64
		for fl, u := range used {
			inUse[fl] += u
			b += borrowed[fl]
		}
		for fl, q := range quota {
			capacity[fl] += q
		}
		t.peakBorrowed[cqs[i].Name] = max(t.peakBorrowed[cqs[i].Name], b)
	}
	var total int64
	for fl, u := range inUse {
		total += min(u, capacity[fl])
	}
	t.peakGPUs = max(t.peakGPUs, total)
}

// gpuUsage is the GPUs a ClusterQueue's admitted workloads use, and the part
// of it borrowed, per flavor.
func gpuUsage(cq *kueue.ClusterQueue) (used, borrowed map[string]int64) {
	used, borrowed = map[string]int64{}, map[string]int64{}
	for _, f := range cq.Status.FlavorsUsage {
		for _, r := range f.Resources {
			if r.Name == GPUResource {
				used[string(f.Name)] = r.Total.Value()
				borrowed[string(f.Name)] = r.Borrowed.Value()
			}
		}
	}
	return used, borrowed
}

// gpuQuota is a ClusterQueue's nominal GPU quota per flavor, and the
// flavors in the order the queue lists them.
func gpuQuota(cq *kueue.ClusterQueue) (map[string]int64, []string) {
	quota := map[string]int64{}
	var order []string
	for _, g := range cq.Spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				if r.Name == GPUResource {
					quota[string(f.Name)] = r.NominalQuota.Value()
					order = append(order, string(f.Name))
				}
			}
		}
	}
	return quota, order
}

// Finished counts the finished Workloads of each ClusterQueue.
func (t *Tracker) Finished() map[string]int {
	out := map[string]int{}
	for _, r := range t.workloads {
		if r.finished {
			out[r.job.Team.ClusterQueue]++
		}
	}
	return out
}

// AllFinished reports whether every submitted Job's Workload finished.
func (t *Tracker) AllFinished() bool {
	n := 0
	for _, r := range t.workloads {
		if r.finished {
			n++
		}
	}
	return n == len(t.jobs)
}

// Preemptions counts preemptions: Total from the Workloads' scheduling
// stats, InQueue and Reclaim from the Preempted conditions seen (a poll
// can miss one that came and went; Other holds the difference).
type Preemptions struct {
	Total, InQueue, Reclaim, Other int
}

// Preemptions sums up the preemptions seen.
func (t *Tracker) Preemptions() Preemptions {
	var p Preemptions
	for _, r := range t.workloads {
		p.Total += r.preemptions
		p.InQueue += r.byReason[kueue.InClusterQueueReason]
		for reason, n := range r.byReason {
			if reason != kueue.InClusterQueueReason {
				p.Reclaim += n
			}
		}
	}
	p.Total = max(p.Total, p.InQueue+p.Reclaim)
	p.Other = p.Total - p.InQueue - p.Reclaim
	return p
}
