package app

import (
	"encoding/json"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kjson "sigs.k8s.io/json"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// benchWorkloadJSON is a Workload as the API server returns one of the
// benchmark's (bench/): one pod set of one container, a pending or a
// finished status as Kuota writes them.
func benchWorkloadJSON(finished bool) []byte {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	wl := kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "cq-0-3-cohort-2", Name: "small-0-123-0", UID: "0b6c7c1e-4b53-4a43-9c1e-3a7f4d7e2b11",
			ResourceVersion: "1234567", Generation: 1, CreationTimestamp: now,
			Labels:        map[string]string{"bench.kuota.dev/class": "small", "bench.kuota.dev/runtime-ms": "200"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kuota-bench", Operation: metav1.ManagedFieldsOperationUpdate, Time: &now}}},
		Spec: kueue.WorkloadSpec{QueueName: "cq-0-3-cohort-2", Priority: ptr.To[int32](50), Active: ptr.To(true),
			PodSets: []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: cpu}}}}}}}},
		Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionFalse, Reason: "Pending",
				Message:            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 1 more needed",
				LastTransitionTime: now, ObservedGeneration: 1}},
			ResourceRequests: []kueue.PodSetRequest{{Name: kueue.DefaultPodSetName, Resources: cpu}},
		},
	}
	if finished {
		cond := func(typ, reason, msg string) metav1.Condition {
			return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: now, ObservedGeneration: 1}
		}
		wl.Status.Conditions = []metav1.Condition{
			cond(kueue.WorkloadQuotaReserved, "QuotaReserved", "Quota reserved in ClusterQueue cq-0-3-cohort-2"),
			cond(kueue.WorkloadAdmitted, "Admitted", "The workload is admitted"),
			cond(kueue.WorkloadFinished, kueue.WorkloadFinishedSucceeded, "Job finished successfully")}
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq-0-3-cohort-2", PodSetAssignments: []kueue.PodSetAssignment{{
			Name: kueue.DefaultPodSetName, Count: ptr.To[int32](1),
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"},
			ResourceUsage: cpu}}}
	}
	data, err := json.Marshal(&wl)
	if err != nil {
		panic(err)
	}
	return data
}

// BenchmarkCachedWorkload reports the heap one Workload keeps in the
// manager's informer cache (B/workload), decoded as client-go decodes it,
// with and without the cache's trimming (go test ./internal/app -run '^$'
// -bench CachedWorkload).
func BenchmarkCachedWorkload(b *testing.B) {
	for _, c := range []struct {
		name     string
		finished bool
		trim     bool
	}{{"pending/untrimmed", false, false}, {"pending/trimmed", false, true},
		{"finished/untrimmed", true, false}, {"finished/trimmed", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			data := benchWorkloadJSON(c.finished)
			t := newTrimmer() // one cache's: equal resource lists are shared
			const n = 5000
			var perWorkload float64
			for b.Loop() {
				kept := make([]any, n)
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for i := range kept {
					wl := &kueue.Workload{}
					if err := kjson.UnmarshalCaseSensitivePreserveInts(data, wl); err != nil {
						b.Fatal(err)
					}
					kept[i] = any(wl)
					if c.trim {
						kept[i], _ = t.workload(wl)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perWorkload = float64(after.HeapAlloc-before.HeapAlloc) / n
				runtime.KeepAlive(kept)
			}
			b.ReportMetric(perWorkload, "B/workload")
		})
	}
}
