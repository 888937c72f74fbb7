package clusterqueue

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

func terminating(t *testing.T) (*Reconciler, client.Client, *cache.Cache) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Finalizers: []string{kueue.ResourceInUseFinalizerName},
		DeletionTimestamp: ptr.To(metav1.Now())}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cq).Build()
	cch := cache.New(lifecycle.Options{})
	return &Reconciler{Client: c, Cache: cch, Recorder: record.NewFakeRecorder(10)}, c, cch
}

func reconcileCQ(t *testing.T, r *Reconciler) ctrl.Result {
	t.Helper()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: "cq"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func exists(t *testing.T, c client.Client) bool {
	t.Helper()
	err := c.Get(context.Background(), types.NamespacedName{Name: "cq"}, &kueue.ClusterQueue{})
	return err == nil
}

// Until the cache holds every workload (the start barrier), a terminating
// ClusterQueue keeps its finalizer: a half-loaded cache counts too few
// reservations.
func TestFinalizerKeptUntilTheCacheIsLoaded(t *testing.T) {
	r, c, _ := terminating(t)
	if res := reconcileCQ(t, r); res.RequeueAfter == 0 {
		t.Fatal("a reconcile before the start barrier must come back later")
	}
	if !exists(t, c) {
		t.Fatal("the finalizer was removed before the cache was loaded")
	}
}

// Once loaded, the finalizer stays while a workload holds quota in the
// queue, and goes with the last one.
func TestFinalizerGoesWithTheLastReservation(t *testing.T) {
	r, c, cch := terminating(t)
	wl := reservingWorkload()
	cch.UpsertWorkload(wl)
	cch.MarkSynced()
	reconcileCQ(t, r)
	if !exists(t, c) {
		t.Fatal("the finalizer was removed while a workload holds quota in the queue")
	}
	cch.DeleteWorkload(types.NamespacedName{Namespace: "ns", Name: "w"})
	reconcileCQ(t, r)
	if exists(t, c) {
		t.Fatal("the finalizer stayed after the last reservation was released")
	}
}

// While a ClusterQueue of a cohort is being deleted, the workloads holding
// quota in it record the cohort: if the finalizer is then removed by
// force and the manager restarts, nothing else tells which cohort their
// usage counts in.
func TestTerminatingQueueRecordsItsCohortOnItsWorkloads(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq", Finalizers: []string{kueue.ResourceInUseFinalizerName},
		DeletionTimestamp: ptr.To(metav1.Now())}, Spec: kueue.ClusterQueueSpec{CohortName: "co"}}
	wl := reservingWorkload()
	other := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pending", UID: "p"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cq, wl.DeepCopy(), other).Build()
	cch := cache.New(lifecycle.Options{})
	cch.UpsertWorkload(wl)
	cch.MarkSynced()
	r := &Reconciler{Client: c, Cache: cch, Recorder: record.NewFakeRecorder(10)}
	reconcileCQ(t, r)
	for name, want := range map[string]string{"w": "co", "pending": ""} {
		var got kueue.Workload
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		if v := got.Annotations[state.CohortAnnotation]; v != want {
			t.Errorf("Workload %s: %s = %q, want %q", name, state.CohortAnnotation, v, want)
		}
	}
	// The cohort of a terminating queue can still be edited: the record
	// follows.
	var live kueue.ClusterQueue
	if err := c.Get(context.Background(), types.NamespacedName{Name: "cq"}, &live); err != nil {
		t.Fatal(err)
	}
	live.Spec.CohortName = "other"
	if err := c.Update(context.Background(), &live); err != nil {
		t.Fatal(err)
	}
	reconcileCQ(t, r)
	var got kueue.Workload
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "w"}, &got); err != nil {
		t.Fatal(err)
	}
	if v := got.Annotations[state.CohortAnnotation]; v != "other" {
		t.Errorf("after the cohort changed: %s = %q, want other", state.CohortAnnotation, v)
	}
}

// reservingWorkload holds 1 cpu of flavor f in ClusterQueue cq.
func reservingWorkload() *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "w", ResourceVersion: "1"},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 1}}},
		Status: kueue.WorkloadStatus{
			Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
				Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "f"},
				ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"}},
		}}
}
