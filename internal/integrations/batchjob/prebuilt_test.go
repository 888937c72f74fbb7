package batchjob

import (
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// prebuiltJob is a queued job naming the Workload wl with the
// prebuilt-workload-name label.
func prebuiltJob(name string, uid types.UID, wl string) *batchv1.Job {
	j := queuedJob(name, uid)
	j.Labels[jobframework.PrebuiltWorkloadLabel] = wl
	return j
}

// A job naming another job's admitted Workload does not run on it: it is
// suspended, a warning names the label and the Workload's owner, and the
// Workload stays the other job's.
func TestPrebuiltWorkloadOfAnotherJobIsNotUsed(t *testing.T) {
	a := queuedJob("a", "uid-a")
	wl := jobWorkload(t, a)
	b := prebuiltJob("b", "uid-b", wl.Name)
	b.Spec.Suspend = ptr.To(false) // it slipped past the webhook
	f := newFinalizerFixture(t, batchIntegration(), a, wl, b)

	if res := f.reconcile("b"); res.RequeueAfter == 0 {
		t.Error("the job must look again later (the Workload may be let go)")
	}
	var got batchv1.Job
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(b), &got); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(got.Spec.Suspend, false) {
		t.Fatal("the job runs on another job's Workload")
	}
	select {
	case e := <-f.rec.Events:
		if !strings.HasPrefix(e, corev1.EventTypeWarning+" "+jobframework.PrebuiltWorkloadInUseReason) ||
			!strings.Contains(e, jobframework.PrebuiltWorkloadLabel) || !strings.Contains(e, "Job a") {
			t.Errorf("event %q, want a warning naming the label and Job a", e)
		}
	default:
		t.Error("no event says why the job is held")
	}
	after := f.workload(wl.Name)
	if len(after.OwnerReferences) != 1 || after.OwnerReferences[0].UID != a.UID {
		t.Fatalf("owner references %+v, want Job a's alone", after.OwnerReferences)
	}
}

// A job that names another job's Workload and ends never finishes that
// Workload: its quota belongs to the other job.
func TestFinishedJobDoesNotFinishAnotherJobsWorkload(t *testing.T) {
	a := queuedJob("a", "uid-a")
	wl := jobWorkload(t, a)
	b := prebuiltJob("b", "uid-b", wl.Name)
	b.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	f := newFinalizerFixture(t, batchIntegration(), a, wl, b)
	f.reconcile("b")
	got := f.workload(wl.Name)
	if c := meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadFinished); c != nil {
		t.Fatalf("Job b finished Job a's Workload: %+v", c)
	}
	if !hasFinalizer(got) {
		t.Fatal("Job b removed the finalizer of Job a's Workload")
	}
}
