// Package jobtest helps the integrations' tests start a job as an admission does.
// It is apart from testutil, which jobframework's own dependencies' tests
// import.
package jobtest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// StartAdmitted starts job as the job reconciler does once its Workload
// is admitted: a Workload of the job's PodSets, controlled by the job (of
// kind gvk; it must have a UID), is admitted whole to ClusterQueue "cq"
// without flavors, and the admission jobframework.AdmissionInfos builds
// from it is applied with RunWithPodSetsInfo. It returns the Workload:
// jobframework.RestoreInfos of it stops the job.
func StartAdmitted(t testing.TB, job jobframework.Job, gvk schema.GroupVersionKind) *kueue.Workload {
	t.Helper()
	obj := job.Object()
	if obj.GetUID() == "" {
		t.Fatalf("%s %s has no UID", gvk.Kind, obj.GetName())
	}
	podSets, err := job.PodSets()
	if err != nil {
		t.Fatalf("PodSets: %v", err)
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: "wl",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
				Name: obj.GetName(), UID: obj.GetUID(), Controller: ptr.To(true)}}},
		Spec:   kueue.WorkloadSpec{QueueName: "lq", PodSets: podSets},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq"}},
	}
	for _, ps := range podSets {
		wl.Status.Admission.PodSetAssignments = append(wl.Status.Admission.PodSetAssignments,
			kueue.PodSetAssignment{Name: ps.Name, Count: ptr.To(ps.Count)})
	}
	infos, err := jobframework.AdmissionInfos(context.Background(), nil, wl)
	if err != nil {
		t.Fatalf("AdmissionInfos: %v", err)
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		t.Fatalf("RunWithPodSetsInfo: %v", err)
	}
	return wl
}
