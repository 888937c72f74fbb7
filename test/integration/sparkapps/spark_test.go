package sparkapps

import (
	"fmt"
	"slices"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A SparkApplication is a Workload with PodSets driver (1) and executor
// (spec.executor.instances), asking for what Spark will request (1g of
// memory plus the 384Mi minimum overhead), with the maximum execution time
// of its label; once admitted it runs with the flavor's node label and
// toleration in spec.driver and spec.executor. A higher-priority
// application (WorkloadPriorityClass label) preempts it: it is suspended,
// spec.driver and spec.executor are restored once the operator has
// deleted its pods (state SUSPENDED), and it waits, queued, while quota is
// short; when the preemptor completes, it is admitted again, runs,
// completes, and the quota returns.
func TestSparkApplicationPreemptedRequeuedAndFinished(t *testing.T) {
	s := setUp(t, "4")
	s.create(&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-high"}, Value: 100})
	low := s.sparkApp("low", 2, jobframework.MaxExecTimeSecondsLabel, "3600")
	s.create(low)
	wl := s.waitWorkload(low)
	if got := podSetNames(wl); !slices.Equal(got, []string{"driver=1", "executor=2"}) {
		t.Fatalf("podsets %v, want driver=1 executor=2", got)
	}
	for _, ps := range wl.Spec.PodSets {
		req := ps.Template.Spec.Containers[0].Resources.Requests
		if req.Cpu().String() != "1" || req.Memory().String() != "1408Mi" {
			t.Errorf("PodSet %s asks for cpu %s memory %s per pod, want 1 and 1408Mi (1g + 384Mi overhead)", ps.Name, req.Cpu(), req.Memory())
		}
	}
	if ptr.Deref(wl.Spec.MaximumExecutionTimeSeconds, 0) != 3600 {
		t.Fatalf("maximumExecutionTimeSeconds %v, want 3600", wl.Spec.MaximumExecutionTimeSeconds)
	}
	s.waitRunning(low)
	s.state(low, sparkv1beta2.ApplicationStateRunning, "")

	high := s.sparkApp("high", 2, jobframework.PriorityClassLabel, s.ns+"-high")
	s.create(high)
	hwl := s.waitWorkload(high)
	if ptr.Deref(hwl.Spec.Priority, 0) != 100 || hwl.Spec.PriorityClassRef == nil || hwl.Spec.PriorityClassRef.Name != s.ns+"-high" {
		t.Fatalf("priority %v ref %+v, want 100 from %s-high", hwl.Spec.Priority, hwl.Spec.PriorityClassRef, s.ns)
	}
	s.eventually("the low-priority application is suspended", func() error {
		if err := s.get(low); err != nil {
			return err
		}
		if !ptr.Deref(low.Spec.Suspend, false) {
			return fmt.Errorf("still running")
		}
		return nil
	})
	if err := s.get(low); err != nil || low.Spec.Executor.NodeSelector["pool"] != s.fl {
		t.Fatalf("the victim's spec was restored while its pods still run (%v)", err)
	}
	s.state(low, sparkv1beta2.ApplicationStateSuspending, "")
	s.state(low, sparkv1beta2.ApplicationStateSuspended, "")
	s.waitRestored(low)
	s.waitRunning(high)
	s.eventually("the victim is requeued", func() error {
		wl := s.workload(low)
		if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c == nil || c.Status != metav1.ConditionTrue || wl.Status.Admission != nil {
			return fmt.Errorf("Requeued %+v admission %v", c, wl.Status.Admission)
		}
		return nil
	})
	s.staysQueued(low)

	s.state(high, sparkv1beta2.ApplicationStateRunning, "")
	s.state(high, sparkv1beta2.ApplicationStateCompleted, "")
	s.waitFinished(high, kueue.WorkloadFinishedSucceeded)
	s.waitRunning(low)
	s.state(low, sparkv1beta2.ApplicationStateRunning, "")
	s.state(low, sparkv1beta2.ApplicationStateCompleted, "")
	s.waitFinished(low, kueue.WorkloadFinishedSucceeded)
	s.waitQuotaFree()
}

// An application waits, suspended and without quota, while another holds
// the quota it needs. The priority of the driver's PriorityClass
// (spec.driver.priorityClassName) becomes its Workload's. A failed
// application finishes its Workload as Failed with the operator's
// message, and its quota goes to the waiting one.
func TestSparkApplicationQueuedWhileQuotaIsShortAndFailureFinishes(t *testing.T) {
	s := setUp(t, "3")
	first := s.sparkApp("first", 2)
	s.create(first)
	s.waitRunning(first)
	s.state(first, sparkv1beta2.ApplicationStateRunning, "")

	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: s.ns + "-pods"}, Value: 7, PreemptionPolicy: ptr.To(corev1.PreemptNever)}
	s.create(pc)
	t.Cleanup(func() { _ = s.c.Delete(t.Context(), pc) })
	second := s.sparkApp("second", 1)
	second.Spec.Driver.PriorityClassName = ptr.To(pc.Name)
	s.create(second)
	swl := s.waitWorkload(second)
	if ptr.Deref(swl.Spec.Priority, 0) != 7 || swl.Spec.PriorityClassRef == nil || swl.Spec.PriorityClassRef.Name != pc.Name {
		t.Fatalf("priority %v ref %+v, want 7 from the driver's PriorityClass %s", swl.Spec.Priority, swl.Spec.PriorityClassRef, pc.Name)
	}
	s.staysQueued(second)

	s.state(first, sparkv1beta2.ApplicationStateFailed, "driver pod failed")
	fwl := s.waitFinished(first, kueue.WorkloadFinishedFailed)
	if c := meta.FindStatusCondition(fwl.Status.Conditions, kueue.WorkloadFinished); c.Message != "driver pod failed" {
		t.Errorf("Finished message %q, want the operator's error message", c.Message)
	}
	s.waitRunning(second)
}
