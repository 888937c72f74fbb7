package jobs

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A Job created with admission gates waits, reason AdmissionGated, while
// its quota is free; removing a gate from the Job removes it from its
// Workload, and removing the last lets the Job run.
func TestAdmissionGatesHoldAJob(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "8")
	j := newJob(ns, "gated", "lq", 1, "1")
	j.Annotations = map[string]string{kueue.AdmissionGatedByAnnotation: "example.com/a,example.com/b"}
	create(t, j)
	waitPendingReason(t, ns, "gated", kueue.WorkloadReasonAdmissionGated, "example.com/a, example.com/b")

	ungate := func(value string) {
		t.Helper()
		eventually(t, "gates of Job gated set to "+value, func() error {
			j := getJob(t, ns, "gated")
			if value == "" {
				delete(j.Annotations, kueue.AdmissionGatedByAnnotation)
			} else {
				j.Annotations[kueue.AdmissionGatedByAnnotation] = value
			}
			return env.Client.Update(context.Background(), j)
		})
	}
	ungate("example.com/b")
	eventually(t, "the Workload keeps only example.com/b", func() error {
		wl := workloadOf(t, getJob(t, ns, "gated"))
		if wl == nil || wl.Annotations[kueue.AdmissionGatedByAnnotation] != "example.com/b" {
			return fmt.Errorf("workload annotations %v", wl.Annotations)
		}
		return nil
	})
	afterCycles(t, func() error {
		if j := getJob(t, ns, "gated"); !ptr.Deref(j.Spec.Suspend, false) {
			return fmt.Errorf("the Job started with a gate left")
		}
		return nil
	})
	ungate("")
	waitRunning(t, ns, "gated", fl)
}
