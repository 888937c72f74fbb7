package lifecycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// wlb builds test workloads.
type wlb struct{ wl *kueue.Workload }

func newWL() *wlb {
	return &wlb{&kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "u", CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 2, Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}},
	}}
}

func (b *wlb) cond(typ string, status metav1.ConditionStatus, reason string, at time.Time) *wlb {
	b.wl.Status.Conditions = append(b.wl.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
		Message: reason, LastTransitionTime: metav1.NewTime(at)})
	return b
}

func (b *wlb) reserved(cq string, admitted bool) *wlb {
	b.wl.Status.Admission = &kueue.Admission{ClusterQueue: kueue.ClusterQueueReference(cq), PodSetAssignments: []kueue.PodSetAssignment{{
		Name: "main", Count: ptr.To[int32](2), Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "f"},
		ResourceUsage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
	b.cond(kueue.WorkloadQuotaReserved, metav1.ConditionTrue, kueue.WorkloadReasonQuotaReserved, t0.Add(-time.Minute))
	if admitted {
		b.cond(kueue.WorkloadAdmitted, metav1.ConditionTrue, kueue.WorkloadReasonAdmitted, t0.Add(-time.Minute))
	}
	return b
}

func (b *wlb) inactive() *wlb { b.wl.Spec.Active = ptr.To(false); return b }

func (b *wlb) owned() *wlb {
	b.wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j", UID: "j"}}
	return b
}

func cqView(stop kueue.StopPolicy, checks ...kueue.AdmissionCheckReference) *state.ClusterQueue {
	cq := &state.ClusterQueue{Name: "cq", StopPolicy: stop}
	for _, c := range checks {
		cq.AdmissionChecks = append(cq.AdmissionChecks, state.AdmissionCheckRule{Name: c})
	}
	return cq
}

func healthyView() *View {
	cq := cqView(kueue.None)
	return &View{LocalQueueKnown: true, LocalQueueStop: kueue.None, ClusterQueueName: "cq", ClusterQueue: cq, AdmittedIn: cq}
}

func TestNextAndPlace(t *testing.T) {
	podsReady := &Options{PodsReady: &PodsReadyOptions{Timeout: 30 * time.Second, RecoveryTimeout: 30 * time.Second,
		Backoff: Backoff{Base: time.Minute, Max: time.Hour, Limit: ptr.To[int32](2)}}}
	cases := []struct {
		name      string
		wl        *kueue.Workload
		view      func(*View)
		opts      *Options
		want      Action
		wantPlace Placement
		check     func(*testing.T, Step)
	}{
		{name: "pending and healthy", wl: newWL().wl, want: None, wantPlace: Queued},
		{name: "finished", wl: newWL().reserved("cq", true).cond(kueue.WorkloadFinished, metav1.ConditionTrue, "Succeeded", t0).wl,
			want: None, wantPlace: Gone},
		{name: "deleted without owner", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", true).wl
			w.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
			return w
		}(), want: None, wantPlace: Gone},
		{name: "deleted without owner drops the finalizer", wl: func() *kueue.Workload {
			w := newWL().wl
			w.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
			w.Finalizers = []string{kueue.ResourceInUseFinalizerName}
			return w
		}(), want: DropFinalizer, wantPlace: Gone},
		{name: "pending workload of a deleted job is not admitted", wl: func() *kueue.Workload {
			w := newWL().owned().wl
			w.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
			return w
		}(), want: None, wantPlace: Aside},
		{name: "deleted with a job keeps its quota", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", true).owned().wl
			w.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
			return w
		}(), want: SyncChecks, wantPlace: Holding},
		{name: "malformed", wl: func() *kueue.Workload { w := newWL().wl; w.Spec.PodSets[0].Count = -1; return w }(),
			want: SetPending, wantPlace: Aside, check: reason(kueue.WorkloadReasonMisconfigured)},
		{name: "inactive pending is marked", wl: newWL().inactive().cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse,
			kueue.WorkloadReasonWaitingForQuota, t0).wl, want: MarkInactive, wantPlace: Aside},
		{name: "inactive pending already marked", wl: newWL().inactive().
			cond(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByDeactivation, t0).
			cond(kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.WorkloadEvictedByDeactivation, t0).
			cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, kueue.WorkloadEvictedByDeactivation, t0).wl, want: None, wantPlace: Aside},
		{name: "inactive reserved is evicted", wl: newWL().reserved("cq", true).inactive().wl, want: Evict, wantPlace: Holding,
			check: reason(kueue.WorkloadEvictedByDeactivation)},
		{name: "deactivation target on active", wl: newWL().reserved("cq", true).
			cond(kueue.WorkloadDeactivationTarget, metav1.ConditionTrue, "RequeuingLimitExceeded", t0).wl, want: Deactivate, wantPlace: Holding},
		{name: "evicted without job is cleared", wl: newWL().reserved("cq", true).
			cond(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPreemption, t0).wl, want: ClearReservation, wantPlace: Holding},
		{name: "evicted with job waits for the job", wl: newWL().reserved("cq", true).owned().
			cond(kueue.WorkloadEvicted, metav1.ConditionTrue, kueue.WorkloadEvictedByPreemption, t0).wl, want: None, wantPlace: Holding},
		{name: "cluster queue drained", wl: newWL().reserved("cq", true).wl, view: func(v *View) { v.AdmittedIn = cqView(kueue.HoldAndDrain) },
			want: Evict, wantPlace: Holding, check: reason(kueue.WorkloadEvictedByClusterQueueStopped)},
		{name: "hold keeps admitted", wl: newWL().reserved("cq", true).wl, view: func(v *View) { v.AdmittedIn = cqView(kueue.Hold) },
			want: SyncChecks, wantPlace: Holding},
		{name: "hold cancels a bare reservation", wl: newWL().reserved("cq", false).wl, view: func(v *View) { v.LocalQueueStop = kueue.Hold },
			want: Evict, wantPlace: Holding, check: reason(kueue.WorkloadEvictedByLocalQueueStopped)},
		{name: "stopped local queue", wl: newWL().wl, view: func(v *View) { v.LocalQueueStop = kueue.Hold }, want: SetPending, wantPlace: Aside,
			check: reason(kueue.WorkloadReasonSuspended)},
		{name: "missing local queue", wl: newWL().wl, view: func(v *View) { *v = View{} }, want: SetPending, wantPlace: Queued,
			check: func(t *testing.T, s Step) {
				if s.Reason != kueue.WorkloadReasonMisconfigured || s.Confirm != ConfirmLocalQueueMissing || s.Message != "LocalQueue lq doesn't exist" {
					t.Fatalf("step %+v", s)
				}
			}},
		{name: "missing cluster queue", wl: newWL().wl, view: func(v *View) { v.ClusterQueue, v.ClusterQueueName = nil, "gone" },
			want: SetPending, wantPlace: Queued, check: func(t *testing.T, s Step) {
				if s.Reason != kueue.WorkloadReasonMisconfigured || s.Confirm != ConfirmClusterQueueMissing || s.Message != "ClusterQueue gone doesn't exist" {
					t.Fatalf("step %+v", s)
				}
			}},
		{name: "max execution time exceeded", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", true).wl
			w.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](30)
			return w
		}(), want: MarkForDeactivation, wantPlace: Holding, check: func(t *testing.T, s Step) {
			if s.Cause != kueue.WorkloadMaximumExecutionTimeExceeded {
				t.Fatalf("cause %q", s.Cause)
			}
		}},
		{name: "max execution time not reached yet", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", true).wl
			w.Spec.MaximumExecutionTimeSeconds = ptr.To[int32](90)
			return w
		}(), want: SyncChecks, wantPlace: Holding, check: func(t *testing.T, s Step) {
			if s.After < 29*time.Second || s.After > 31*time.Second {
				t.Fatalf("after %s, want about 30s", s.After)
			}
		}},
		{name: "pods ready timeout", wl: newWL().reserved("cq", true).cond(kueue.WorkloadPodsReady, metav1.ConditionFalse,
			string(kueue.WorkloadWaitForStart), t0.Add(-10*time.Minute)).wl, opts: podsReady,
			view: func(v *View) {}, want: Evict, wantPlace: Holding, check: func(t *testing.T, s Step) {
				if s.Cause != kueue.WorkloadWaitForStart || s.Backoff != PodsReadyBackoff {
					t.Fatalf("step %+v", s)
				}
			}},
		{name: "pods ready in time", wl: newWL().reserved("cq", true).cond(kueue.WorkloadPodsReady, metav1.ConditionTrue, "Started", t0).wl,
			opts: podsReady, want: SyncChecks, wantPlace: Holding},
		{name: "pods not ready yet", wl: newWL().reserved("cq", true).wl, opts: &Options{PodsReady: &PodsReadyOptions{Timeout: 5 * time.Minute}},
			want: SyncChecks, wantPlace: Holding, check: func(t *testing.T, s Step) {
				if s.After < 4*time.Minute || s.After > 4*time.Minute+time.Second {
					t.Fatalf("after %s, want about 4m", s.After)
				}
			}},
		{name: "requeue limit reached deactivates", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", true).wl
			w.Status.RequeueState = &kueue.RequeueState{Count: ptr.To[int32](2)}
			return w
		}(), opts: podsReady, want: MarkForDeactivation, wantPlace: Holding},
		{name: "rejected check", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", false).wl
			w.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "ac", State: kueue.CheckStateRejected}}
			return w
		}(), want: MarkForDeactivation, wantPlace: Holding},
		{name: "retry check", wl: func() *kueue.Workload {
			w := newWL().reserved("cq", false).wl
			w.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "ac", State: kueue.CheckStateRetry}}
			return w
		}(), want: Evict, wantPlace: Holding, check: reason(kueue.WorkloadEvictedByAdmissionCheck)},
		{name: "checks listed", wl: newWL().reserved("cq", false).wl, view: func(v *View) { v.AdmittedIn = cqView(kueue.None, "ac") },
			want: SyncChecks, wantPlace: Holding, check: func(t *testing.T, s Step) {
				if len(s.Checks) != 1 || s.Checks[0] != "ac" {
					t.Fatalf("checks %v", s.Checks)
				}
			}},
		{name: "backoff running", wl: func() *kueue.Workload {
			w := newWL().cond(kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.WorkloadEvictedByPodsReadyTimeout, t0).wl
			w.Status.RequeueState = &kueue.RequeueState{RequeueAt: ptr.To(metav1.NewTime(t0.Add(time.Minute)))}
			return w
		}(), want: Wait, wantPlace: Aside},
		{name: "backoff over", wl: func() *kueue.Workload {
			w := newWL().cond(kueue.WorkloadRequeued, metav1.ConditionFalse, kueue.WorkloadEvictedByPodsReadyTimeout, t0).wl
			w.Status.RequeueState = &kueue.RequeueState{RequeueAt: ptr.To(metav1.NewTime(t0.Add(-time.Second)))}
			return w
		}(), want: Requeue, wantPlace: Aside, check: reason(kueue.WorkloadBackoffFinished)},
		{name: "reactivated", wl: newWL().cond(kueue.WorkloadRequeued, metav1.ConditionFalse, "DeactivatedDueToAdmissionCheck", t0).wl,
			want: Requeue, wantPlace: Aside, check: reason(kueue.WorkloadReactivated)},
		{name: "cluster queue still stopped", wl: newWL().cond(kueue.WorkloadRequeued, metav1.ConditionFalse,
			kueue.WorkloadEvictedByClusterQueueStopped, t0).wl, view: func(v *View) { v.ClusterQueue = cqView(kueue.Hold) }, want: None, wantPlace: Aside},
		{name: "cluster queue restarted", wl: newWL().cond(kueue.WorkloadRequeued, metav1.ConditionFalse,
			kueue.WorkloadEvictedByClusterQueueStopped, t0).wl, want: Requeue, wantPlace: Aside, check: reason(kueue.WorkloadClusterQueueRestarted)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := healthyView()
			if tc.view != nil {
				tc.view(v)
			}
			opts := tc.opts
			if opts == nil {
				opts = &Options{}
			}
			got := Next(tc.wl, v, opts, t0)
			if got.Action != tc.want {
				t.Fatalf("Next = %s (%+v), want %s", got.Action, got, tc.want)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
			if p := Place(tc.wl, v); p != tc.wantPlace {
				t.Fatalf("Place = %s, want %s", p, tc.wantPlace)
			}
		})
	}
}

func reason(want string) func(*testing.T, Step) {
	return func(t *testing.T, s Step) {
		t.Helper()
		if s.Reason != want {
			t.Fatalf("reason %q, want %q (step %+v)", s.Reason, want, s)
		}
	}
}

func TestAdmittedUsageSubtractsReclaimablePods(t *testing.T) {
	w := newWL().reserved("cq", true).wl
	w.Status.ReclaimablePods = []kueue.ReclaimablePod{{Name: "main", Count: 1}}
	a := Admitted(w, healthyView(), &Options{})
	for fr, v := range a.Usage {
		if fr.Resource == corev1.ResourceCPU && v != 1000 {
			t.Fatalf("cpu usage %d, want 1000 (one of two pods reclaimed)", v)
		}
	}
	if a.ClusterQueue != "cq" || !a.Admitted {
		t.Fatalf("record %+v", a)
	}
}
