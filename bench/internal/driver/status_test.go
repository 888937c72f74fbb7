package driver

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func withConditions(admitted bool, conds ...metav1.Condition) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns", UID: "u-1", ResourceVersion: "7", Generation: 1}}
	if admitted {
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq"}
	}
	for _, c := range conds {
		c.LastTransitionTime = metav1.NewTime(t0)
		wl.Status.Conditions = append(wl.Status.Conditions, c)
	}
	return wl
}

func cond(typ string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: "R"}
}

func TestDecide(t *testing.T) {
	reserved, admitted := cond(kueue.WorkloadQuotaReserved, "True"), cond(kueue.WorkloadAdmitted, "True")
	evicted, finished := cond(kueue.WorkloadEvicted, "True"), cond(kueue.WorkloadFinished, "True")
	for _, tc := range []struct {
		name       string
		wl         *kueue.Workload
		admittedAt time.Time
		want       Action
		wantLeft   time.Duration
	}{
		{"pending", withConditions(false), time.Time{}, None, 0},
		{"running", withConditions(true, reserved, admitted), t0, Wait, 400 * time.Millisecond},
		{"ran its time", withConditions(true, reserved, admitted), t0.Add(-time.Second), Finish, 0},
		{"admission not seen yet", withConditions(true, reserved, admitted), time.Time{}, None, 0},
		{"evicted, still holding", withConditions(true, reserved, admitted, evicted), t0, Clear, 0},
		{"evicted, released", withConditions(false, cond(kueue.WorkloadQuotaReserved, "False"), evicted), t0, None, 0},
		{"finished", withConditions(true, reserved, admitted, finished), t0.Add(-time.Second), None, 0},
		{"finished, then evicted", withConditions(true, reserved, admitted, finished, evicted), t0, None, 0},
	} {
		got, left := Decide(tc.wl, tc.admittedAt, 500*time.Millisecond, t0.Add(100*time.Millisecond))
		if got != tc.want || left != tc.wantLeft {
			t.Errorf("%s: Decide = %s, %s; want %s, %s", tc.name, got, left, tc.want, tc.wantLeft)
		}
	}
}

func TestClearStatus(t *testing.T) {
	wl := withConditions(true, cond(kueue.WorkloadQuotaReserved, "True"), cond(kueue.WorkloadAdmitted, "True"),
		cond(kueue.WorkloadEvicted, "True"), cond("SomethingElse", "True"))
	now := t0.Add(time.Minute)
	st := ClearStatus(wl, now)
	if st.Admission != nil {
		t.Error("admission kept")
	}
	qr := meta.FindStatusCondition(st.Conditions, kueue.WorkloadQuotaReserved)
	ad := meta.FindStatusCondition(st.Conditions, kueue.WorkloadAdmitted)
	if qr == nil || qr.Status != "False" || !qr.LastTransitionTime.Time.Equal(now) || ad == nil || ad.Status != "False" {
		t.Errorf("conditions = %+v, want QuotaReserved and Admitted False since now", st.Conditions)
	}
	if !meta.IsStatusConditionTrue(st.Conditions, kueue.WorkloadEvicted) {
		t.Error("Evicted dropped: an apply that leaves out an owned condition removes it")
	}
	if meta.FindStatusCondition(st.Conditions, "SomethingElse") != nil {
		t.Error("a condition the admission field manager does not own is in the apply")
	}
	if wl.Status.Admission == nil {
		t.Error("ClearStatus changed its input")
	}
}

func TestFinishStatusAndApplyBody(t *testing.T) {
	wl := withConditions(true, cond(kueue.WorkloadQuotaReserved, "True"), cond(kueue.WorkloadAdmitted, "True"))
	st := FinishStatus(wl, t0.Add(time.Second))
	if !meta.IsStatusConditionTrue(st.Conditions, kueue.WorkloadFinished) || st.Admission == nil ||
		!meta.IsStatusConditionTrue(st.Conditions, kueue.WorkloadAdmitted) {
		t.Errorf("finish status = %+v, want Finished=True with the admission kept", st)
	}
	body, err := ApplyBody(wl, st)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	md, _ := back["metadata"].(map[string]any)
	if back["kind"] != "Workload" || md["uid"] != "u-1" || md["resourceVersion"] != "7" || back["spec"] != nil {
		t.Errorf("apply body = %s, want kind, uid and resourceVersion preconditions and no spec", body)
	}
}

func TestSameAdmission(t *testing.T) {
	at := metav1.NewTime(time.Unix(100, 0))
	admitted := func(cq kueue.ClusterQueueReference, when metav1.Time) *kueue.Workload {
		return &kueue.Workload{Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: cq},
			Conditions: []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, LastTransitionTime: when}}}}
	}
	if !sameAdmission(admitted("a", at), admitted("a", at)) {
		t.Error("equal admissions reported different")
	}
	if sameAdmission(admitted("a", at), admitted("b", at)) {
		t.Error("admissions to different queues reported the same")
	}
	if sameAdmission(admitted("a", at), admitted("a", metav1.NewTime(time.Unix(200, 0)))) {
		t.Error("a readmission reported the same as the first admission")
	}
	if sameAdmission(admitted("a", at), &kueue.Workload{}) {
		t.Error("an admission reported the same as none")
	}
}
