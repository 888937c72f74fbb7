package admission

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
)

// newWorkload is a Workload of two pods of half a CPU each.
func newWorkload(name string) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: kueue.WorkloadSpec{
		QueueName: "lq",
		PodSets: []kueue.PodSet{{Name: "main", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("500m")}}}},
		}}}},
	}}
}

// admissionOf is the admission Kuota's scheduler would write for
// newWorkload.
func admissionOf(cq kueue.ClusterQueueReference) *kueue.Admission {
	return &kueue.Admission{ClusterQueue: cq, PodSetAssignments: []kueue.PodSetAssignment{{
		Name: "main", Count: ptr.To[int32](2),
		Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "default"},
		ResourceUsage: corev1.ResourceList{"cpu": resource.MustParse("1")},
	}}}
}

// createWorkload creates a fresh Workload and returns it as stored.
func createWorkload(t *testing.T, name string) *kueue.Workload {
	t.Helper()
	ctx := context.Background()
	wl := newWorkload(name)
	if err := k8s.Create(ctx, wl); err != nil {
		t.Fatalf("creating Workload: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), wl) })
	return wl
}

// writeStatus applies the status built from the stored Workload the way
// Kuota's manager does (server-side apply, kueue-admission field manager).
func writeStatus(t *testing.T, wl *kueue.Workload, build func(*kueue.Workload) *kueue.WorkloadStatus) error {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	w := &apply.Writer{Client: k8s}
	return w.WorkloadStatus(ctx, wl, build(wl), apply.AdmissionManager)
}

func TestManagerStatusWritesAreAccepted(t *testing.T) {
	now := metav1.Now()
	wl := createWorkload(t, "lifecycle")
	steps := []struct {
		name  string
		build func(*kueue.Workload) *kueue.WorkloadStatus
	}{
		{"pending", func(wl *kueue.Workload) *kueue.WorkloadStatus {
			st, _ := apply.Pending(wl, kueue.WorkloadReasonPending, "waiting", nil, now)
			return st
		}},
		{"reserve", func(wl *kueue.Workload) *kueue.WorkloadStatus {
			return apply.Reserve(wl, admissionOf("cq"), []kueue.AdmissionCheckReference{"prov"}, now)
		}},
		{"evict", func(wl *kueue.Workload) *kueue.WorkloadStatus {
			return apply.Evict(wl, kueue.WorkloadEvictedByPreemption, "", kueue.InClusterQueueReason, "preempted", now)
		}},
		{"clear reservation", func(wl *kueue.Workload) *kueue.WorkloadStatus {
			return apply.ClearReservation(wl, true, kueue.WorkloadEvictedByPreemption, "preempted", now)
		}},
		{"reserve again", func(wl *kueue.Workload) *kueue.WorkloadStatus {
			return apply.Reserve(wl, admissionOf("cq"), nil, now)
		}},
	}
	for _, s := range steps {
		if err := writeStatus(t, wl, s.build); err != nil {
			t.Fatalf("%s rejected: %v", s.name, err)
		}
	}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	if wl.Status.Admission == nil || !apply.IsTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) {
		t.Fatalf("the reservation was not stored: %+v", wl.Status)
	}
}

func TestInvalidWorkloadStatusWritesAreRejected(t *testing.T) {
	now := metav1.Now()
	wl := createWorkload(t, "status-checks")
	err := writeStatus(t, wl, func(wl *kueue.Workload) *kueue.WorkloadStatus {
		st := apply.AdmissionStatus(wl)
		st.Admission = admissionOf("cq")
		apply.SetCondition(&st.Conditions, kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.WorkloadReasonPending, "no", 1, now)
		return st
	})
	expectDenied(t, err, "vworkload.kb.io", "status.admission")

	err = writeStatus(t, wl, func(wl *kueue.Workload) *kueue.WorkloadStatus {
		adm := admissionOf("cq")
		adm.PodSetAssignments[0].ResourceUsage["cpu"] = resource.MustParse("1001m")
		return apply.Reserve(wl, adm, nil, now)
	})
	expectDenied(t, err, "vworkload.kb.io", "status.admission.podSetAssignments[0].resourceUsage[cpu]")

	if err := writeStatus(t, wl, func(wl *kueue.Workload) *kueue.WorkloadStatus {
		return apply.Reserve(wl, admissionOf("cq"), nil, now)
	}); err != nil {
		t.Fatalf("reservation rejected: %v", err)
	}
	err = writeStatus(t, wl, func(wl *kueue.Workload) *kueue.WorkloadStatus {
		st := apply.AdmissionStatus(wl)
		st.Admission.ClusterQueue = "other"
		return st
	})
	expectDenied(t, err, "vworkload.kb.io", "status.admission.clusterQueue")

	changed := wl.DeepCopy()
	changed.Spec.PodSets[0].Count = 3
	expectDenied(t, k8s.Update(context.Background(), changed), "vworkload.kb.io", "spec.podSets[0]")
}

// The manager learns the version its status write made from the answer
// (it asks for metadata only), and a write built from a Workload that has
// changed since it was read is refused whole: the precondition holds.
func TestStatusWriteReturnsItsVersionAndRefusesAStaleRead(t *testing.T) {
	ctx := context.Background()
	now := metav1.Now()
	wl := createWorkload(t, "versions")
	stale := wl.DeepCopy()
	w := &apply.Writer{Client: k8s}
	st, _ := apply.Pending(wl, kueue.WorkloadReasonPending, "waiting for quota", nil, now)
	rv, err := w.WorkloadStatusVersion(ctx, wl, st, apply.AdmissionManager)
	if err != nil {
		t.Fatal(err)
	}
	var stored kueue.Workload
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), &stored); err != nil {
		t.Fatal(err)
	}
	if rv == "" || rv != stored.ResourceVersion {
		t.Errorf("the write returned version %q, the Workload is at %q", rv, stored.ResourceVersion)
	}
	if c := meta.FindStatusCondition(stored.Status.Conditions, kueue.WorkloadQuotaReserved); c == nil || c.Message != "waiting for quota" {
		t.Errorf("QuotaReserved after the write: %+v", c)
	}

	_, err = w.WorkloadStatusVersion(ctx, stale, apply.Reserve(stale, admissionOf("cq"), nil, now), apply.AdmissionManager)
	if !apierrors.IsConflict(err) {
		t.Fatalf("a write from a stale read: got %v, want a conflict", err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.Status.Admission != nil || stored.ResourceVersion != rv {
		t.Errorf("the refused write changed the Workload: version %s, admission %+v", stored.ResourceVersion, stored.Status.Admission)
	}
}
