package trainjobs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A TrainJob is queued with its runtime's PodSets (numNodes pods of the
// trainer job), admitted with the flavor in Kuota's runtime patch,
// preempted by a higher WorkloadPriorityClass (suspended, the patch
// removed once its child Jobs are gone), held while the quota is short,
// re-admitted when the preemptor finishes, and finished from the
// trainer's conditions. The priority and the maximum execution time come
// from the TrainJob's labels.
func TestTrainJobQueuedAdmittedPreemptedReadmittedFinished(t *testing.T) {
	ns, fl := queues(t, "4")
	m := startManager(t)
	runtimeName := ns + "-torch"
	create(t, runtimeObject("", runtimeName))
	ref := map[string]any{"name": runtimeName}

	low := newTrainJob(ns, "low", ref, 3, map[string]string{
		jobframework.PriorityClassLabel: ns + "-low", jobframework.MaxExecTimeSecondsLabel: "600"})
	create(t, low)
	low = waitRunning(t, ns, "low", fl)
	wl := workloadOf(t, low)
	if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Name != "node" || wl.Spec.PodSets[0].Count != 3 {
		t.Fatalf("podSets %+v, want node of 3 (numNodes)", wl.Spec.PodSets)
	}
	if ref := wl.Spec.PriorityClassRef; ref == nil || ref.Name != ns+"-low" || ptr.Deref(wl.Spec.Priority, 0) != 10 {
		t.Errorf("priority %v %v, want WorkloadPriorityClass %s-low of 10", wl.Spec.PriorityClassRef, wl.Spec.Priority, ns)
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 600 {
		t.Errorf("maximumExecutionTimeSeconds %v, want 600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	if tol := fmt.Sprint(kuotaPatch(low)); !strings.Contains(tol, "dedicated") {
		t.Errorf("Kuota's patch lacks the flavor's toleration: %s", tol)
	}
	setStatus(t, ns, "low", jobsStatus(1, 1, 0))

	// A higher priority TrainJob preempts it.
	create(t, newTrainJob(ns, "high", ref, 2, map[string]string{jobframework.PriorityClassLabel: ns + "-high"}))
	eventually(t, "low suspended", func() error {
		if !suspended(getTrainJob(t, ns, "low")) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	// Its child Jobs still run: the patch stays until they are gone.
	if err := m.WaitCycles(3, 10*time.Second, func() error {
		if kuotaPatch(getTrainJob(t, ns, "low")) == nil {
			return fmt.Errorf("Kuota's patch removed while child Jobs are active")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	setStatus(t, ns, "low", jobsStatus(0, 0, 0))
	eventually(t, "low restored and requeued", func() error {
		u := getTrainJob(t, ns, "low")
		if p := kuotaPatch(u); p != nil {
			return fmt.Errorf("Kuota's patch still there: %v", p)
		}
		w := workloadOf(t, u)
		if w.Status.Admission != nil || !meta.IsStatusConditionTrue(w.Status.Conditions, kueue.WorkloadRequeued) {
			return fmt.Errorf("admission %v, conditions %v", w.Status.Admission, w.Status.Conditions)
		}
		return nil
	})
	waitRunning(t, ns, "high", fl)

	// 2 of 4 cpus are free, low needs 3: it stays queued.
	if err := m.WaitCycles(3, 10*time.Second, func() error {
		u := getTrainJob(t, ns, "low")
		if !suspended(u) || meta.IsStatusConditionTrue(workloadOf(t, u).Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("low admitted while the quota is short")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// high finishes; low is admitted again, then fails.
	setStatus(t, ns, "high", map[string]any{"conditions": []any{condition("Complete", "JobSetCompleted", "done")}})
	eventually(t, "high's Workload finished", func() error {
		w := workloadOf(t, getTrainJob(t, ns, "high"))
		if c := meta.FindStatusCondition(w.Status.Conditions, kueue.WorkloadFinished); c == nil || c.Status != "True" || c.Reason != kueue.WorkloadFinishedSucceeded {
			return fmt.Errorf("finished condition %v", c)
		}
		return nil
	})
	waitRunning(t, ns, "low", fl)
	setStatus(t, ns, "low", map[string]any{"conditions": []any{condition("Failed", "JobSetFailed", "node 0 crashed")}})
	eventually(t, "low's Workload finished as failed", func() error {
		w := workloadOf(t, getTrainJob(t, ns, "low"))
		c := meta.FindStatusCondition(w.Status.Conditions, kueue.WorkloadFinished)
		if c == nil || c.Reason != kueue.WorkloadFinishedFailed || c.Message != "node 0 crashed" {
			return fmt.Errorf("finished condition %v", c)
		}
		return nil
	})
}

// A TrainJob whose TrainingRuntime does not exist gets no Workload, and an
// event naming spec.runtimeRef; once the runtime is created, the
// Workload follows and the TrainJob runs.
func TestTrainJobWaitsForItsRuntime(t *testing.T) {
	ctx := context.Background()
	ns, fl := queues(t, "4")
	m := startManager(t)
	ref := map[string]any{"name": "later", "kind": "TrainingRuntime"}
	create(t, newTrainJob(ns, "waiting", ref, 2, nil))
	eventually(t, "an event naming spec.runtimeRef", func() error {
		var events corev1.EventList
		if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "waiting" && e.Reason == "ErrWorkloadCompose" && strings.Contains(e.Message, "spec.runtimeRef") &&
				strings.Contains(e.Message, `"later"`) {
				return nil
			}
		}
		return fmt.Errorf("no such event among %d", len(events.Items))
	})
	if err := m.WaitCycles(2, 10*time.Second, func() error {
		if wl := workloadOf(t, getTrainJob(t, ns, "waiting")); wl != nil {
			return fmt.Errorf("a Workload %s without a runtime", wl.Name)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	create(t, runtimeObject(ns, "later"))
	u := waitRunning(t, ns, "waiting", fl)
	if wl := workloadOf(t, u); wl.Spec.PodSets[0].Count != 2 {
		t.Errorf("podSets %+v, want node of 2", wl.Spec.PodSets)
	}
}
