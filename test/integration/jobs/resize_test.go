package jobs

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A running Job whose parallelism is raised beyond its admission is
// stopped, its Workload replaced by one of the new size, which is admitted
// when the quota allows: the extra pods never run outside the quota.
func TestJobGrownWhileRunningIsQueuedAgain(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "4")
	j := newJob(ns, "grows", "lq", 2, "1")
	j.Spec.Completions = ptr.To[int32](12)
	create(t, j)
	first := waitRunning(t, ns, "grows", fl)
	old := workloadOf(t, first)
	eventually(t, "parallelism raised to 6", func() error {
		j := getJob(t, ns, "grows")
		j.Spec.Parallelism = ptr.To[int32](6)
		return env.Client.Update(context.Background(), j)
	})
	// 6 pods of 1 cpu can never fit in 4: the Job waits, suspended.
	waitPendingReason(t, ns, "grows", kueue.WorkloadReasonExceedsMaxQuota, "6 requested, at most 4")
	if wl := workloadOf(t, getJob(t, ns, "grows")); wl.UID == old.UID || wl.Spec.PodSets[0].Count != 6 {
		t.Fatalf("the Workload was not replaced by one of 6 pods: uid %s (old %s), count %d", wl.UID, old.UID, wl.Spec.PodSets[0].Count)
	}
	eventually(t, "parallelism lowered to 3", func() error {
		j := getJob(t, ns, "grows")
		j.Spec.Parallelism = ptr.To[int32](3)
		return env.Client.Update(context.Background(), j)
	})
	waitRunning(t, ns, "grows", fl)
	eventually(t, "admitted with 3 pods", func() error {
		wl := workloadOf(t, getJob(t, ns, "grows"))
		if wl == nil || wl.Status.Admission == nil || ptr.Deref(wl.Status.Admission.PodSetAssignments[0].Count, 0) != 3 {
			return fmt.Errorf("workload %v", wl)
		}
		return nil
	})
}
