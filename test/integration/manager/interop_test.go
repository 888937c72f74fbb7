package manager

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ownedBy makes a ConfigMap stand for a job and sets it as the workload's
// controller owner: Kuota then leaves clearing the reservation of an
// evicted workload to the job side, as it does for real jobs.
func ownedBy(t *testing.T, wl *kueue.Workload, jobName string) *kueue.Workload {
	t.Helper()
	job := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Name: jobName}}
	create(t, job)
	wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: job.Name, UID: job.UID,
		Controller: new(true)}}
	return wl
}

// Kueue's scalability runner plays the job for its workloads: once one is
// evicted, it applies, under the field manager kueue-admission with
// server-side apply and force, a status without admission and with
// QuotaReserved=False. Kuota writes admission under that manager, so the
// apply removes it and the quota is released.
func TestRunnerClearsAdmissionWithServerSideApply(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "2", preemption(kueue.PreemptionPolicyLowerPriority, "")),
		localQueue(ns, "lq", cq))
	create(t, ownedBy(t, newWorkload(ns, "low", "lq", 2, "1", 0), "low-job"))
	waitAdmitted(t, ns, "low", cq)

	create(t, newWorkload(ns, "high", "lq", 2, "1", 100))
	waitWorkload(t, ns, "low", "evicted by preemption", func(wl *kueue.Workload) error {
		return hasCondition(wl, kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPreemption)
	})
	// The job side has not acted: the victim keeps its quota, the
	// preemptor waits for it.
	stayAdmittedWhileEvicted(t, ns, "low")
	waitPending(t, ns, "high", kueue.WorkloadReasonWaitingForPreemptedWorkloads)
	waitUsage(t, cq, fl, 1, "2", "0")

	runnerClearsAdmission(t, ns, "low")
	waitWorkload(t, ns, "low", "without admission", func(wl *kueue.Workload) error {
		if wl.Status.Admission != nil {
			return fmt.Errorf("admission %+v is still there", wl.Status.Admission)
		}
		if st, _ := condition(wl, kueue.WorkloadQuotaReserved); st != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved=%q", st)
		}
		return nil
	})
	waitAdmitted(t, ns, "high", cq)
	waitUsage(t, cq, fl, 1, "2", "0")
	// The victim is back in its queue, behind the preemptor.
	waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
		if st.PendingWorkloads != 1 {
			return fmt.Errorf("pending %d, want 1", st.PendingWorkloads)
		}
		return nil
	})
	checkAudit(t, ns)
}

// stayAdmittedWhileEvicted checks that an evicted workload whose job has not
// acted keeps its admission over the next scheduling cycles.
func stayAdmittedWhileEvicted(t *testing.T, ns, name string) {
	t.Helper()
	afterCycles(t, quietCycles, func() error {
		wl := getWorkload(t, ns, name)
		if wl.Status.Admission == nil || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("the reservation of %s, whose job has not stopped, was cleared: %v", name, wl.Status.Conditions)
		}
		return nil
	})
}

// runnerClearsAdmission does what Kueue's scalability runner does to an
// evicted workload: apply its admission status without admission, with
// QuotaReserved=False and Admitted=False, under kueue-admission, forcing.
func runnerClearsAdmission(t *testing.T, ns, name string) {
	t.Helper()
	wl := getWorkload(t, ns, name)
	now := metav1.Now()
	conds := wl.Status.DeepCopy().Conditions
	meta.SetStatusCondition(&conds, metav1.Condition{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse,
		Reason: kueue.WorkloadReasonPending, Message: "Evicted by the test runner", LastTransitionTime: now, ObservedGeneration: wl.Generation})
	meta.SetStatusCondition(&conds, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionFalse,
		Reason: kueue.WorkloadReasonNoReservation, Message: "The workload has no reservation", LastTransitionTime: now, ObservedGeneration: wl.Generation})
	status := kueue.WorkloadStatus{Conditions: conds, SchedulingStats: wl.Status.SchedulingStats}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": obj}}
	u.SetAPIVersion(kueue.GroupVersion.String())
	u.SetKind("Workload")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(wl.UID)
	if err := env.Client.Status().Apply(context.Background(), client.ApplyConfigurationFromUnstructured(u),
		client.FieldOwner("kueue-admission"), client.ForceOwnership); err != nil {
		t.Fatalf("applying the runner's status: %v", err)
	}
}
