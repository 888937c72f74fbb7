package lifecycle

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestRetention(t *testing.T) {
	keep := func(finished, deactivated *time.Duration) *Options {
		return &Options{Retention: Retention{AfterFinished: finished, AfterDeactivatedByKueue: deactivated}}
	}
	minute := ptr.To(time.Minute)
	finished := func() *wlb {
		return newWL().reserved("cq", true).cond(kueue.WorkloadFinished, metav1.ConditionTrue, "Succeeded", t0.Add(-30*time.Second))
	}
	// Marked inactive by Kuota (as apply.Inactive writes it) or by a user.
	deactivated := func(reason string) *wlb {
		b := newWL().inactive().owned()
		b.wl.OwnerReferences[0].Controller = ptr.To(true)
		return b.
			cond(kueue.WorkloadEvicted, metav1.ConditionTrue, reason, t0.Add(-2*time.Minute)).
			cond(kueue.WorkloadRequeued, metav1.ConditionFalse, reason, t0.Add(-2*time.Minute)).
			cond(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, reason, t0.Add(-2*time.Minute))
	}
	byKuota := kueue.WorkloadEvictedByDeactivation + "DueTo" + string(kueue.WorkloadRequeuingLimitExceeded)
	for name, tc := range map[string]struct {
		wl    *kueue.Workload
		opts  *Options
		want  Action
		after time.Duration
	}{
		"finished, kept for good":            {finished().wl, keep(nil, minute), None, 0},
		"finished, retention not over":       {finished().wl, keep(minute, nil), Wait, 30 * time.Second},
		"finished, retention over":           {finished().wl, keep(ptr.To(10*time.Second), nil), DeleteWorkload, 0},
		"finished, deleted at once":          {finished().wl, keep(ptr.To(time.Duration(0)), nil), DeleteWorkload, 0},
		"deactivated by Kuota, over":         {deactivated(byKuota).wl, keep(nil, minute), DeleteJob, 0},
		"deactivated by Kuota, not over":     {deactivated(byKuota).wl, keep(nil, ptr.To(5*time.Minute)), Wait, 3 * time.Minute},
		"deactivated by a user":              {deactivated(kueue.WorkloadEvictedByDeactivation).wl, keep(nil, minute), None, 0},
		"deactivated by Kuota, no retention": {deactivated(byKuota).wl, keep(minute, nil), None, 0},
	} {
		s := Next(tc.wl, healthyView(), tc.opts, t0)
		if s.Action != tc.want {
			t.Errorf("%s: %s, want %s", name, s.Action, tc.want)
			continue
		}
		if tc.want == Wait && (s.After < tc.after || s.After > tc.after+time.Second) {
			t.Errorf("%s: wait %s, want about %s", name, s.After, tc.after)
		}
	}
	orphan := deactivated(byKuota).wl
	orphan.OwnerReferences = nil
	if s := Next(orphan, healthyView(), keep(nil, minute), t0); s.Action != None {
		t.Errorf("a workload without a job has no job to delete: %s", s.Action)
	}
}
