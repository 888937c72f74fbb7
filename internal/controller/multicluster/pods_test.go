package multicluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestWorkerPodIsAGatedCopyWithoutTheManagersMetadata(t *testing.T) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", ResourceVersion: "7",
			Labels: map[string]string{jobframework.QueueNameLabel: "lq"}, Finalizers: []string{jobframework.PodFinalizer}},
		Spec:   corev1.PodSpec{SchedulingGates: []corev1.PodSchedulingGate{{Name: jobframework.AdmissionGate}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	cp := workerPod(p, "wl", "multikueue")
	if cp.UID != "" || cp.ResourceVersion != "" || len(cp.Finalizers) > 0 || cp.Status.Phase != "" {
		t.Errorf("the copy keeps the manager's metadata or status: %+v", cp.ObjectMeta)
	}
	if !jobframework.IsGated(cp) {
		t.Errorf("the copy lost its admission gate; the worker's Kuota would not hold it")
	}
	if cp.Labels[jobframework.PrebuiltWorkloadLabel] != "wl" || cp.Labels[kueue.MultiKueueOriginLabel] != "multikueue" ||
		cp.Labels[jobframework.QueueNameLabel] != "lq" || cp.Annotations[kueue.MultiKueueOriginUIDAnnotation] != "u1" {
		t.Errorf("labels %v annotations %v", cp.Labels, cp.Annotations)
	}
	if p.Labels[jobframework.PrebuiltWorkloadLabel] != "" {
		t.Errorf("the manager's pod was changed")
	}
}

func TestMissingPodsSkipsEndedAndDeletedPods(t *testing.T) {
	now := metav1.Now()
	local := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "copied"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "new"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "failed"}, Status: corev1.PodStatus{Phase: corev1.PodFailed}},
		{ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: &now}},
	}
	remote := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "copied"}}}
	got := missingPods(local, remote)
	if len(got) != 1 || got[0].Name != "new" {
		t.Errorf("missing %v, want only the new pod", got)
	}
}

func TestWaitingForgetsTheMirroredRun(t *testing.T) {
	now := metav1.Now()
	ran := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now, QOSClass: corev1.PodQOSBurstable,
		Conditions:        []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Ready: true}}}
	w := waiting(&ran)
	if w.Phase != corev1.PodPending || w.StartTime != nil || len(w.ContainerStatuses) > 0 || w.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("waiting status %+v", w)
	}
	if len(w.Conditions) != 1 || w.Conditions[0].Type != corev1.PodScheduled || w.Conditions[0].Reason != corev1.PodReasonSchedulingGated {
		t.Errorf("conditions %+v, want PodScheduled=False SchedulingGated only", w.Conditions)
	}
	if again := waiting(&w); again.Conditions[0].Message != w.Conditions[0].Message || again.Phase != w.Phase {
		t.Errorf("a waiting status is not kept as it is: %+v", again)
	}
}
