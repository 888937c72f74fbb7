package plugin

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func metav1Name(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func labelled(name string, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: labels}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
		Name: "c", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}}}
}

// newJob returns a suspended Job.
func newJob(ns, name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{Spec: podSpec()}},
	}
}

// newWorkload returns a Workload of one pod in LocalQueue lq, owned by job
// when it is not nil.
func newWorkload(ns, name, lq string, job *batchv1.Job, labels map[string]string) *kueue.Workload {
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: kueue.WorkloadSpec{QueueName: kueue.LocalQueueName(lq), PodSets: []kueue.PodSet{{
			Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: podSpec()},
		}}},
	}
	if job != nil {
		wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	return wl
}

// condition is a true condition that changed at t.
func condition(kind string, t time.Time) metav1.Condition {
	return metav1.Condition{Type: kind, Status: metav1.ConditionTrue, Reason: kind, Message: kind, LastTransitionTime: metav1.NewTime(t)}
}

// admit writes an admission to cq in the workload's status, with the
// conditions given.
func admit(t *testing.T, wl *kueue.Workload, cq string, conds ...metav1.Condition) {
	t.Helper()
	wl.Status.Admission = &kueue.Admission{ClusterQueue: kueue.ClusterQueueReference(cq),
		PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1)}}}
	wl.Status.Conditions = conds
	updateStatus(t, wl)
}

func updateStatus(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Status().Update(context.Background(), obj); err != nil {
		t.Fatalf("writing the status of %T %s: %v", obj, obj.GetName(), err)
	}
}
