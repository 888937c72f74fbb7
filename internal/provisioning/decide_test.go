package provisioning

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

// reserved is a workload with a quota reservation, one "main" PodSet of 3
// pods asking for a GPU each and a "driver" PodSet asking for CPU only,
// and the check "prov" in state.
func reserved(state kueue.CheckState, retries int32) *kueue.Workload {
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	return &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "job-a", Namespace: "ns", UID: "uid-a"},
		Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{
			{Name: "main", Count: 3, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{Requests: gpu}}}}}},
			{Name: "driver", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{Requests: cpu}}}}}},
		}},
		Status: kueue.WorkloadStatus{
			Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue}},
			Admission: &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{
				{Name: "main", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"nvidia.com/gpu": "gpu-flavor"}, Count: ptr.To[int32](2)},
				{Name: "driver", Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "default"}},
			}},
			AdmissionChecks: []kueue.AdmissionCheckState{{Name: "prov", State: state, RetryCount: ptr.To(retries),
				LastTransitionTime: metav1.NewTime(now.Add(-time.Minute))}},
		},
	}
}

func gpuConfig() *kueue.ProvisioningRequestConfigSpec {
	return &kueue.ProvisioningRequestConfigSpec{
		ProvisioningClassName: "check-capacity.autoscaling.x-k8s.io",
		ManagedResources:      []corev1.ResourceName{"nvidia.com/gpu"},
		RetryStrategy:         &kueue.ProvisioningRequestRetryStrategy{BackoffLimitCount: ptr.To[int32](2), BackoffBaseSeconds: ptr.To[int32](10), BackoffMaxSeconds: ptr.To[int32](15)},
		PodSetUpdates: &kueue.ProvisioningRequestPodSetUpdates{NodeSelector: []kueue.ProvisioningRequestPodSetUpdatesNodeSelector{
			{Key: "example.com/pool", ValueFromProvisioningClassDetail: "pool"},
		}},
	}
}

func request(wl *kueue.Workload, attempt int32, conds ...metav1.Condition) *Request {
	return &Request{Name: RequestName(wl.Name, "prov", attempt), Conditions: conds, Details: map[string]string{"pool": "pool-7"}}
}

func cond(typ, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, Message: msg}
}

func decide(wl *kueue.Workload, cfg *kueue.ProvisioningRequestConfigSpec, reqs ...*Request) Decision {
	in := Input{Workload: wl, Check: "prov", Config: cfg, Requests: map[int32]*Request{}, Now: now}
	for _, r := range reqs {
		i := strings.LastIndex(r.Name, "-")
		var a int32
		for _, ch := range r.Name[i+1:] {
			a = a*10 + int32(ch-'0')
		}
		in.Requests[a] = r
	}
	return Decide(in)
}

func TestPendingWithoutRequestCreatesOne(t *testing.T) {
	d := decide(reserved(kueue.CheckStatePending, 0), gpuConfig())
	if !d.Create || d.Attempt != 1 {
		t.Fatalf("want the first attempt's request created, got %+v", d)
	}
	if d.State == nil || d.State.State != kueue.CheckStatePending || !strings.Contains(d.State.Message, "job-a-prov-1") {
		t.Fatalf("want a pending state naming the request, got %+v", d.State)
	}
	if !d.State.LastTransitionTime.Equal(&metav1.Time{Time: now.Add(-time.Minute)}) {
		t.Errorf("a message change moved lastTransitionTime: %v", d.State.LastTransitionTime)
	}
}

func TestProvisionedMakesTheCheckReady(t *testing.T) {
	wl := reserved(kueue.CheckStatePending, 0)
	d := decide(wl, gpuConfig(), request(wl, 1, cond(Accepted, ""), cond(Provisioned, "nodes are up")))
	if d.Create || d.State == nil || d.State.State != kueue.CheckStateReady {
		t.Fatalf("want Ready without a new request, got %+v", d)
	}
	if !d.State.LastTransitionTime.Time.Equal(now) {
		t.Errorf("lastTransitionTime = %v, want now", d.State.LastTransitionTime)
	}
	if len(d.State.PodSetUpdates) != 1 {
		t.Fatalf("want updates for the GPU PodSet only, got %+v", d.State.PodSetUpdates)
	}
	u := d.State.PodSetUpdates[0]
	if u.Name != "main" || u.Annotations[ConsumeAnnotation] != "job-a-prov-1" ||
		u.Annotations[ClassAnnotation] != "check-capacity.autoscaling.x-k8s.io" || u.NodeSelector["example.com/pool"] != "pool-7" {
		t.Errorf("unexpected update %+v", u)
	}
}

func TestFailedRetriesWithBackoffThenRejects(t *testing.T) {
	for _, tc := range []struct {
		retries int32
		state   kueue.CheckState
		wait    int32
	}{{0, kueue.CheckStateRetry, 10}, {1, kueue.CheckStateRetry, 15}, {2, kueue.CheckStateRejected, 0}} {
		wl := reserved(kueue.CheckStatePending, tc.retries)
		d := decide(wl, gpuConfig(), request(wl, tc.retries+1, cond(Failed, "no capacity in zone")))
		if d.State == nil || d.State.State != tc.state {
			t.Fatalf("retries %d: want %s, got %+v", tc.retries, tc.state, d.State)
		}
		if !strings.Contains(d.State.Message, "no capacity in zone") {
			t.Errorf("retries %d: the message lost the request's: %q", tc.retries, d.State.Message)
		}
		if got := ptr.Deref(d.State.RequeueAfterSeconds, 0); got != tc.wait {
			t.Errorf("retries %d: requeueAfterSeconds = %d, want %d", tc.retries, got, tc.wait)
		}
	}
}

func TestAcceptedKeepsPendingWithItsMessage(t *testing.T) {
	wl := reserved(kueue.CheckStatePending, 0)
	d := decide(wl, gpuConfig(), request(wl, 1, cond(Accepted, "ETA 5m")))
	if d.State == nil || d.State.State != kueue.CheckStatePending || !strings.Contains(d.State.Message, "ETA 5m") {
		t.Fatalf("want Pending with the ETA, got %+v", d.State)
	}
	wl.Status.AdmissionChecks[0] = *d.State
	if again := decide(wl, gpuConfig(), request(wl, 1, cond(Accepted, "ETA 5m"))); again.State != nil {
		t.Errorf("nothing changed, yet a new state: %+v", again.State)
	}
}

func TestCapacityRevokedRejectsAReadyCheck(t *testing.T) {
	wl := reserved(kueue.CheckStateReady, 0)
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue})
	d := decide(wl, gpuConfig(), request(wl, 1, cond(Provisioned, ""), cond(CapacityRevoked, "nodes deleted")))
	if d.State == nil || d.State.State != kueue.CheckStateRejected {
		t.Fatalf("want Rejected, got %+v", d.State)
	}
}

func TestBookingExpiredCountsOnlyBeforeAdmission(t *testing.T) {
	wl := reserved(kueue.CheckStateReady, 0)
	expired := request(wl, 1, cond(Provisioned, ""), cond(BookingExpired, ""))
	if d := decide(wl, gpuConfig(), expired); d.State == nil || d.State.State != kueue.CheckStateRetry {
		t.Fatalf("before admission an expired booking is a failure, got %+v", d.State)
	}
	wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue})
	if d := decide(wl, gpuConfig(), expired); d.State != nil {
		t.Fatalf("after admission an expired booking changes nothing, got %+v", d.State)
	}
}

func TestNoManagedResourceIsReadyWithoutRequest(t *testing.T) {
	wl := reserved(kueue.CheckStatePending, 0)
	wl.Spec.PodSets = wl.Spec.PodSets[1:]
	d := decide(wl, gpuConfig())
	if d.Create || d.State == nil || d.State.State != kueue.CheckStateReady || d.State.Message != MsgNotNeeded {
		t.Fatalf("want Ready with no request, got %+v", d)
	}
}

func TestRequestsOfEarlierAttemptsAreDeleted(t *testing.T) {
	wl := reserved(kueue.CheckStatePending, 1)
	old := request(wl, 1, cond(Failed, ""))
	d := decide(wl, gpuConfig(), old)
	if !d.Create || d.Attempt != 2 || len(d.Delete) != 1 || d.Delete[0] != old {
		t.Fatalf("want attempt 2 created and attempt 1 deleted, got %+v", d)
	}
}

func TestWorkloadWithoutQuotaDropsItsRequests(t *testing.T) {
	for name, edit := range map[string]func(*kueue.Workload){
		"evicted": func(wl *kueue.Workload) {
			wl.Status.Conditions = append(wl.Status.Conditions, cond(kueue.WorkloadEvicted, ""))
		},
		"finished": func(wl *kueue.Workload) {
			wl.Status.Conditions = append(wl.Status.Conditions, cond(kueue.WorkloadFinished, ""))
		},
		"released": func(wl *kueue.Workload) { wl.Status.Conditions[0].Status = metav1.ConditionFalse },
	} {
		wl := reserved(kueue.CheckStatePending, 0)
		edit(wl)
		d := decide(wl, gpuConfig(), request(wl, 1))
		if d.Create || d.State != nil || len(d.Delete) != 1 {
			t.Errorf("%s: want the request deleted and nothing else, got %+v", name, d)
		}
	}
}

func TestInactiveCheckWaits(t *testing.T) {
	if d := decide(reserved(kueue.CheckStatePending, 0), nil); d.Create || d.State != nil || len(d.Delete) != 0 {
		t.Fatalf("without a config nothing happens, got %+v", d)
	}
}

func TestDelayDoublesUpToMax(t *testing.T) {
	r := Retry{Limit: 5, Base: 60 * time.Second, Max: 200 * time.Second}
	for n, want := range map[int32]time.Duration{1: 60 * time.Second, 2: 120 * time.Second, 3: 200 * time.Second, 30: 200 * time.Second} {
		if got := r.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
	if d := RetryOf(&kueue.ProvisioningRequestConfigSpec{}); d.Limit != 3 || d.Base != time.Minute || d.Max != 30*time.Minute {
		t.Errorf("defaults: %+v", d)
	}
}

func TestCheckActivity(t *testing.T) {
	ac := &kueue.AdmissionCheck{Spec: kueue.AdmissionCheckSpec{ControllerName: ControllerName,
		Parameters: &kueue.AdmissionCheckParametersReference{APIGroup: "kueue.x-k8s.io", Kind: "ProvisioningRequestConfig", Name: "cfg"}}}
	cfg := &kueue.ProvisioningRequestConfig{}
	if a := CheckActivity(ac, cfg, true); !a.Active || a.Reason != ReasonActive {
		t.Errorf("valid check: %+v", a)
	}
	if a := CheckActivity(ac, nil, true); a.Active || a.Reason != ReasonBadParametersRef || !strings.Contains(a.Message, `"cfg"`) {
		t.Errorf("missing config: %+v", a)
	}
	if a := CheckActivity(ac, cfg, false); a.Active || a.Reason != ReasonNotServed {
		t.Errorf("CRD not served: %+v", a)
	}
	ac.Spec.Parameters.Kind = "MultiKueueConfig"
	if a := CheckActivity(ac, cfg, true); a.Active || a.Reason != ReasonBadParametersRef {
		t.Errorf("wrong kind: %+v", a)
	}
	ac.Spec.Parameters = nil
	if a := CheckActivity(ac, cfg, true); a.Active || a.Reason != ReasonBadParametersRef {
		t.Errorf("no parameters: %+v", a)
	}
}
