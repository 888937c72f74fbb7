package crash

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// seenWorkload builds the states the observer is fed.
type seenWorkload struct {
	cq        string
	at        int // QuotaReserved transition, in seconds
	evictions int32
	evicted   bool
	finished  bool
}

func (s seenWorkload) object() *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: types.UID("uid-w")}}
	at := metav1.NewTime(time.Unix(int64(s.at), 0))
	set := func(typ string, on bool) {
		st := metav1.ConditionFalse
		if on {
			st = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: typ, Status: st, Reason: "R", LastTransitionTime: at})
	}
	if s.cq != "" {
		wl.Status.Admission = &kueue.Admission{ClusterQueue: kueue.ClusterQueueReference(s.cq)}
	}
	set(kueue.WorkloadQuotaReserved, s.cq != "")
	set(kueue.WorkloadEvicted, s.evicted)
	set(kueue.WorkloadFinished, s.finished)
	if s.evictions > 0 {
		wl.Status.SchedulingStats = &kueue.SchedulingStats{Evictions: []kueue.WorkloadSchedulingStatsEviction{
			{Reason: "Preempted", Count: s.evictions}}}
	}
	return wl
}

// TestObserverFollowsReservations checks the observer's judgement of a
// workload's history, as the jobs see it through the informer.
func TestObserverFollowsReservations(t *testing.T) {
	cases := map[string]struct {
		states     []seenWorkload
		admissions int
		problem    string
	}{
		"admitted, evicted and cleared in one write, admitted again": {
			states:     []seenWorkload{{}, {cq: "a", at: 1}, {evictions: 1, evicted: true}, {cq: "b", at: 2, evictions: 1}},
			admissions: 2,
		},
		"evicted, then cleared, then admitted again in the same second": {
			states: []seenWorkload{{cq: "a", at: 1}, {cq: "a", at: 1, evictions: 1, evicted: true},
				{evictions: 1, evicted: true}, {cq: "a", at: 1, evictions: 1}},
			admissions: 2,
		},
		"states between two reservations missed, eviction counted": {
			states:     []seenWorkload{{cq: "a", at: 1}, {cq: "b", at: 5, evictions: 1}},
			admissions: 2,
		},
		"the same reservation seen again": {
			states:     []seenWorkload{{cq: "a", at: 1}, {cq: "a", at: 1}},
			admissions: 1,
		},
		"admitted and finished": {
			states:     []seenWorkload{{cq: "a", at: 1}, {cq: "a", at: 1, finished: true}},
			admissions: 1,
		},
		"reservation replaced without an eviction": {
			states:     []seenWorkload{{cq: "a", at: 1}, {cq: "b", at: 2}},
			admissions: 2, problem: "replaced by b@",
		},
		"reservation dropped without an eviction": {
			states:     []seenWorkload{{cq: "a", at: 1}, {}},
			admissions: 1, problem: "released without an eviction",
		},
		"reserved again after it finished": {
			states:     []seenWorkload{{cq: "a", at: 1, finished: true}, {cq: "a", at: 9, finished: true}},
			admissions: 0, problem: "after it finished",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := &observer{tracks: map[types.UID]*reservation{}, onAdmission: func(time.Time) {}}
			for _, s := range tc.states {
				o.workload(s.object())
			}
			counts, problems := o.report()
			if counts[sigAdmission] != tc.admissions {
				t.Errorf("admissions: got %d, want %d", counts[sigAdmission], tc.admissions)
			}
			got := strings.Join(problems, "\n")
			if tc.problem == "" && got != "" || !strings.Contains(got, tc.problem) {
				t.Errorf("problems: got %q, want one with %q", got, tc.problem)
			}
		})
	}
}
