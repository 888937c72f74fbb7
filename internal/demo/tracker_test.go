package demo

import (
	"reflect"
	"testing"
	"time"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestJobObject(t *testing.T) {
	j := JobSpec{Name: "sweep-01", Team: TeamB, Priority: PriorityHigh, Parallelism: 4, Completions: 12, GPUsPerPod: 2}
	job := j.Job()
	if job.Namespace != "team-b" || job.Name != "sweep-01" {
		t.Errorf("job %s/%s", job.Namespace, job.Name)
	}
	want := map[string]string{QueueNameLabel: "team-b", PriorityClassLabel: "high", DemoLabel: "true"}
	if !reflect.DeepEqual(job.Labels, want) {
		t.Errorf("labels %v, want %v", job.Labels, want)
	}
	if job.Spec.Suspend != nil {
		t.Error("the Job is suspended by Kuota's webhook, not by the user")
	}
	if *job.Spec.Parallelism != 4 || *job.Spec.Completions != 12 {
		t.Errorf("parallelism %d completions %d", *job.Spec.Parallelism, *job.Spec.Completions)
	}
	res := job.Spec.Template.Spec.Containers[0].Resources
	if g := res.Requests[GPUResource]; g.Value() != 2 {
		t.Errorf("GPU request %s", g.String())
	}
	if g := res.Limits[GPUResource]; g.Value() != 2 {
		t.Errorf("GPU limit %s (extended resources need requests equal to limits)", g.String())
	}
	if c, m := res.Requests["cpu"], res.Requests["memory"]; c.String() != "4" || m.String() != "16Gi" {
		t.Errorf("cpu %s memory %s", c.String(), m.String())
	}
}

// tracked is a tracker that saw two Jobs: low (team-a) and high (team-b).
func tracked() *Tracker {
	t := NewTracker()
	t.Submitted(JobSpec{Name: "low", Team: TeamA, Priority: PriorityLow, Parallelism: 1, Completions: 1, GPUsPerPod: 1}, "job-low")
	t.Submitted(JobSpec{Name: "high", Team: TeamB, Priority: PriorityHigh, Parallelism: 1, Completions: 1, GPUsPerPod: 1}, "job-high")
	return t
}

func TestTrackerFollowsWorkloads(t *testing.T) {
	tr := tracked()
	low := workload("wl-low", "job-low", "team-a", 0)
	high := workload("wl-high", "job-high", "team-b", 2*time.Second)
	stray := workload("wl-stray", "job-of-an-earlier-run", "team-a", 0)
	tr.ObserveWorkloads([]kueue.Workload{low, high, stray})
	if tr.AllFinished() || len(tr.workloads) != 2 {
		t.Fatalf("finished %v, %d workloads tracked", tr.AllFinished(), len(tr.workloads))
	}

	// low is admitted at 3s, preempted at 5s by a higher priority, admitted
	// again at 9s: its wait ends at the first admission.
	low = withCondition(low, kueue.WorkloadAdmitted, "Admitted", 3*time.Second)
	tr.ObserveWorkloads([]kueue.Workload{low, high})
	low.Status.Conditions = nil
	low = withCondition(low, kueue.WorkloadPreempted, kueue.InClusterQueueReason, 5*time.Second)
	low = withPreemptions(low, 1)
	tr.ObserveWorkloads([]kueue.Workload{low, high})
	tr.ObserveWorkloads([]kueue.Workload{low, high}) // the same condition is counted once
	low.Status.Conditions = nil
	low = withCondition(low, kueue.WorkloadAdmitted, "Admitted", 9*time.Second)
	low = withCondition(low, kueue.WorkloadFinished, "Succeeded", 12*time.Second)
	// high waits 1s, is reclaimed twice (one seen), finishes.
	high = withCondition(high, kueue.WorkloadAdmitted, "Admitted", 3*time.Second)
	high = withCondition(high, kueue.WorkloadPreempted, kueue.InCohortReclamationReason, 4*time.Second)
	high = withCondition(high, kueue.WorkloadFinished, "Succeeded", 6*time.Second)
	high = withPreemptions(high, 2)
	tr.ObserveWorkloads([]kueue.Workload{low, high})

	if !tr.AllFinished() {
		t.Error("both Workloads finished")
	}
	// A late event with an older version changes nothing.
	tr.ObserveWorkloads([]kueue.Workload{workload("wl-high", "job-high", "team-b", 2*time.Second)})
	if !tr.AllFinished() {
		t.Error("an older version undid a finish")
	}
	if got, want := tr.Finished(), map[string]int{"team-a": 1, "team-b": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("Finished = %v, want %v", got, want)
	}
	if got, want := tr.Preemptions(), (Preemptions{Total: 3, InQueue: 1, Reclaim: 1, Other: 1}); got != want {
		t.Errorf("Preemptions = %+v, want %+v", got, want)
	}
	if r := tr.workloads["wl-low"]; !r.admitted.Equal(t0.Add(3 * time.Second)) {
		t.Errorf("low first admitted at %s", r.admitted)
	}
}

func TestTrackerPeaks(t *testing.T) {
	tr := NewTracker()
	tr.ObserveQueues([]kueue.ClusterQueue{
		queue("team-a", 0, 3, map[string]int64{"a100": 12, "v100": 8}, map[string]int64{"a100": 4}),
		queue("team-b", 0, 1, map[string]int64{"a100": 4}, nil),
	})
	tr.ObserveQueues([]kueue.ClusterQueue{
		queue("team-a", 0, 1, map[string]int64{"a100": 2}, nil),
		queue("team-b", 0, 1, map[string]int64{"v100": 14}, map[string]int64{"v100": 6}),
	})
	if tr.peakGPUs != 24 {
		t.Errorf("peak %d GPUs, want 24", tr.peakGPUs)
	}
	// team-a's status still counts 8 v100 GPUs that team-b reclaimed.
	tr.ObserveQueues([]kueue.ClusterQueue{
		queue("team-a", 0, 1, map[string]int64{"a100": 16, "v100": 8}, map[string]int64{"a100": 8}),
		queue("team-b", 0, 1, map[string]int64{"v100": 16}, map[string]int64{"v100": 8}),
	})
	if tr.peakGPUs != 32 {
		t.Errorf("peak %d GPUs, want 32: a flavor's use is capped at its quota", tr.peakGPUs)
	}
	if want := map[string]int64{"team-a": 8, "team-b": 8}; !reflect.DeepEqual(tr.peakBorrowed, want) {
		t.Errorf("peak borrowed %v, want %v", tr.peakBorrowed, want)
	}
}

func TestPreemptionsString(t *testing.T) {
	tests := map[Preemptions]string{
		{}:                                 "0",
		{Total: 1, Reclaim: 1}:             "1 (1 reclaim)",
		{Total: 5, InQueue: 2, Reclaim: 3}: "5 (2 by priority, 3 reclaims)",
		{Total: 4, InQueue: 1, Other: 3}:   "4 (1 by priority, 3 other)",
		{Total: 6, InQueue: 6}:             "6 (6 by priority)",
	}
	for p, want := range tests {
		if got := p.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", p, got, want)
		}
	}
}
