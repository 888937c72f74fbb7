package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/state"
)

// TestFinishedVictimIsNotEvicted: a victim that finished between the
// decision and the eviction write keeps its status; no write is sent.
func TestFinishedVictimIsNotEvicted(t *testing.T) {
	scheme := kueueScheme(t)
	now := metav1.NewTime(time.Unix(1000, 0))
	wl := reservedVictim(now)
	wl.Status.Conditions = append(wl.Status.Conditions,
		metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: now})
	writes := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
				writes++
				return nil
			},
			SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
				writes++
				return nil
			},
		}).Build()
	s := &Scheduler{Client: c, Writer: &apply.Writer{Client: c}, Recorder: record.NewFakeRecorder(10), Cache: cache.New(lifecycle.Options{})}
	s.evict(context.Background(), types.NamespacedName{Namespace: "ns", Name: "victim"}, "other-cq", "InClusterQueue", "preempted", now.Time)
	if writes != 0 {
		t.Fatalf("%d status writes to a finished victim, want none", writes)
	}
	assertNotEvicted(t, c, client.ObjectKeyFromObject(wl))
}

// TestVictimWithoutJobIsReleasedInTheEvictingWrite: a Workload with no
// owner has no pods to stop, so the eviction also gives its quota back.
func TestVictimWithoutJobIsReleasedInTheEvictingWrite(t *testing.T) {
	scheme := kueueScheme(t)
	now := metav1.NewTime(time.Unix(1000, 0))
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "victim"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).Build()
	s := &Scheduler{Client: c, Writer: &apply.Writer{Client: c}, Recorder: record.NewFakeRecorder(10), Cache: cache.New(lifecycle.Options{})}
	// Admitted the way the scheduler admits, so that the admission field
	// manager owns the reservation.
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	if err := s.Writer.WorkloadStatus(context.Background(), wl, apply.Reserve(wl, &kueue.Admission{ClusterQueue: "cq"}, nil, now),
		apply.AdmissionManager); err != nil {
		t.Fatal(err)
	}
	s.evict(context.Background(), client.ObjectKeyFromObject(wl), "other-cq", "InCohortReclamation", "preempted", now.Time)
	var got kueue.Workload
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(wl), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Admission != nil {
		t.Errorf("the victim still holds its admission: %+v", got.Status.Admission)
	}
	for _, want := range []struct {
		typ    string
		status metav1.ConditionStatus
	}{{kueue.WorkloadEvicted, metav1.ConditionTrue}, {kueue.WorkloadPreempted, metav1.ConditionTrue},
		{kueue.WorkloadQuotaReserved, metav1.ConditionFalse}, {kueue.WorkloadRequeued, metav1.ConditionTrue}} {
		if c := meta.FindStatusCondition(got.Status.Conditions, want.typ); c == nil || c.Status != want.status {
			t.Errorf("condition %s = %+v, want %s", want.typ, c, want.status)
		}
	}
}

// TestEvictionReadsTheAPIServer: the informer still shows a victim that
// has finished meanwhile; the eviction reads the victim from the API
// server, sees it finished, and writes nothing.
func TestEvictionReadsTheAPIServer(t *testing.T) {
	scheme := kueueScheme(t)
	now := metav1.NewTime(time.Unix(1000, 0))
	running := reservedVictim(now)
	applies := 0
	live := fake.NewClientBuilder().WithScheme(scheme).WithObjects(running.DeepCopy()).WithStatusSubresource(running).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
				applies++
				return c.SubResource(sub).Apply(ctx, obj, opts...)
			},
		}).Build()
	var seen kueue.Workload
	if err := live.Get(context.Background(), client.ObjectKeyFromObject(running), &seen); err != nil {
		t.Fatal(err)
	}
	// The informer keeps this version; the job finishes the victim.
	informer := fake.NewClientBuilder().WithScheme(scheme).WithObjects(seen.DeepCopy()).WithStatusSubresource(running).Build()
	finished := seen.DeepCopy()
	finished.Status.Conditions = append(finished.Status.Conditions,
		metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded", LastTransitionTime: now})
	if err := live.Status().Update(context.Background(), finished); err != nil {
		t.Fatal(err)
	}
	s := &Scheduler{Client: informer, APIReader: live, Writer: &apply.Writer{Client: live}, Recorder: record.NewFakeRecorder(10),
		Cache: cache.New(lifecycle.Options{})}
	s.evict(context.Background(), client.ObjectKeyFromObject(running), "other-cq", "InClusterQueue", "preempted", now.Time)
	if applies != 0 {
		t.Fatalf("%d eviction writes to a finished victim, want none", applies)
	}
	assertNotEvicted(t, live, client.ObjectKeyFromObject(running))
}

// TestVictimWithAdmissionInFlightIsDecidedAgain: a victim the scheduler
// admitted a moment ago, whose admission the API server does not show yet,
// is not taken for gone: it stops counting as evicting, so that the next
// cycle decides again instead of waiting for it to end by itself.
func TestVictimWithAdmissionInFlightIsDecidedAgain(t *testing.T) {
	scheme := kueueScheme(t)
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "victim", UID: "v"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(wl).WithStatusSubresource(wl).Build()
	s := &Scheduler{Client: c, APIReader: c, Writer: &apply.Writer{Client: c}, Recorder: record.NewFakeRecorder(10),
		Cache: cache.New(lifecycle.Options{}), log: logr.Discard()}
	key := client.ObjectKeyFromObject(wl)
	if err := s.Cache.Assume(&state.Admitted{Key: key, UID: "v", ClusterQueue: "cq", Admitted: true}, "1"); err != nil {
		t.Fatal(err)
	}
	s.Cache.MarkEvicting(key, time.Unix(1000, 0).UnixNano())
	s.evict(context.Background(), key, "other-cq", "InClusterQueue", "preempted", time.Unix(1000, 0))
	if s.Cache.Evicting(key) {
		t.Fatal("the victim still counts as evicting though no eviction was written")
	}
}

// assertNotEvicted fails the test if the API holds an Evicted condition on
// the workload.
func assertNotEvicted(t *testing.T, c client.Client, key types.NamespacedName) {
	t.Helper()
	var got kueue.Workload
	if err := c.Get(context.Background(), key, &got); err != nil {
		t.Fatal(err)
	}
	if meta.FindStatusCondition(got.Status.Conditions, kueue.WorkloadEvicted) != nil {
		t.Fatalf("finished victim got an Evicted condition: %+v", got.Status.Conditions)
	}
}

// reservedVictim is a workload "ns/victim" holding quota in "cq".
func reservedVictim(now metav1.Time) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "victim"},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq"}, Conditions: []metav1.Condition{
			{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: now},
		}}}
}
