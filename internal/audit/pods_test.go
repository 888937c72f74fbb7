package audit

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// released: the reservation was cleared at `at` (after an hour admitted).
func released(at time.Time) wlOpt {
	return func(wl *kueue.Workload) {
		withCondition(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, at)(wl)
		withCondition(kueue.WorkloadAdmitted, metav1.ConditionFalse, at)(wl)
	}
}

func TestPodsAgainstAdmissions(t *testing.T) {
	adm := admitted("cq", "f", 1, usage{"cpu": "1"})
	waiting := withCondition(kueue.WorkloadQuotaReserved, metav1.ConditionFalse, testNow.Add(-time.Hour))
	tests := []struct {
		name  string
		items []any
		grace time.Duration
		want  []string
	}{{
		name:  "pods of an admitted Workload",
		items: []any{newWorkload("a", 2, adm), newPod("a-1", ofWorkload("a")), newPod("a-2", ofWorkload("a"), pending(false))},
	}, {
		name: "a job's pod runs while its Workload waits",
		items: []any{newWorkload("a", 1, waiting), newPod("a-1", ofWorkload("a")),
			newPod("a-2", ofWorkload("a"), pending(false))},
		want: []string{
			"Pod ns/a-1: runs on node n1 but its Workload a is not admitted (QuotaReserved is False, Admitted is not set)",
			"Pod ns/a-2: is not gated (it may be scheduled) but its Workload a is not admitted (QuotaReserved is False, Admitted is not set)",
		},
	}, {
		name: "gated, finished and deleted pods do not run",
		items: []any{newWorkload("a", 1, waiting), newPod("gated", managed(), pending(true)),
			newPod("done", ofWorkload("a"), phase(corev1.PodSucceeded)), newPod("failed", ofWorkload("a"), phase(corev1.PodFailed)),
			newPod("going", ofWorkload("a"), podDeleting())},
	}, {
		name:  "pods of no managed job are not checked",
		items: []any{newPod("plain"), newPod("other", podLabel("app", "x"))},
	}, {
		name:  "the Workload a pod names does not exist",
		items: []any{newPod("a-1", ofWorkload("gone"))},
		want:  []string{"Pod ns/a-1: runs on node n1 but its Workload gone does not exist"},
	}, {
		name:  "a managed pod with no Workload",
		items: []any{newPod("p", managed())},
		want:  []string{"Pod ns/p: runs on node n1 but has no Workload"},
	}, {
		name: "plain pods find their Workload by owner",
		items: []any{newWorkload("pod-p-1", 1, adm, ownedByPod("p")), newPod("p", managed()),
			newWorkload("pod-q-1", 1, waiting, ownedByPod("q")), newPod("q", managed())},
		want: []string{"Pod ns/q: runs on node n1 but its Workload pod-q-1 is not admitted (QuotaReserved is False, Admitted is not set)"},
	}, {
		name: "pod groups by group name, prebuilt Workloads by label",
		items: []any{newWorkload("g", 2, waiting), newPod("g-0", inGroup("g")), newPod("g-1", inGroup("g"), pending(true)),
			newWorkload("pre", 1, adm), newPod("h-0", inGroup("h"), podLabel(prebuiltLabel, "pre"))},
		want: []string{"Pod ns/g-0: runs on node n1 but its Workload g is not admitted (QuotaReserved is False, Admitted is not set)"},
	}, {
		name: "an eviction in progress",
		items: []any{newWorkload("a", 1, adm, withCondition(kueue.WorkloadEvicted, metav1.ConditionTrue, testNow.Add(-time.Hour))),
			newPod("a-1", ofWorkload("a"))},
	}, {
		name: "evicted an hour ago, the pod still runs",
		items: []any{newWorkload("a", 1, released(testNow.Add(-time.Hour)),
			withCondition(kueue.WorkloadEvicted, metav1.ConditionTrue, testNow.Add(-time.Hour))),
			newPod("a-1", ofWorkload("a"))},
		want: []string{"Pod ns/a-1: runs on node n1 but its Workload a is not admitted (QuotaReserved is False, Admitted is False)"},
	}, {
		name:  "released within the grace",
		items: []any{newWorkload("a", 1, released(testNow.Add(-10*time.Second))), newPod("a-1", ofWorkload("a"))},
	}, {
		name:  "released beyond a shorter grace",
		items: []any{newWorkload("a", 1, released(testNow.Add(-10*time.Second))), newPod("a-1", ofWorkload("a"))},
		grace: 5 * time.Second,
		want:  []string{"Pod ns/a-1: runs on node n1 but its Workload a is not admitted (QuotaReserved is False, Admitted is False)"},
	}, {
		name:  "finished an hour ago, a pod still runs",
		items: []any{newWorkload("a", 1, adm, finished(testNow.Add(-time.Hour))), newPod("a-1", ofWorkload("a"))},
		want:  []string{"Pod ns/a-1: runs on node n1 but its Workload a is not admitted (QuotaReserved is True, Admitted is True, Finished)"},
	}, {
		name: "an elastic job's pods count in the slice that replaced theirs",
		items: []any{newWorkload("s1", 2, adm, finished(testNow.Add(-time.Hour))),
			newWorkload("s2", 3, adm, wlAnnotation(kueue.WorkloadSliceReplacementForAnnotation, "ns/s1")),
			newPod("a-1", ofWorkload("s1")), newPod("a-2", ofWorkload("s2"))},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := checkAt(objects(append(tc.items, newClusterQueue("cq", "", quota{flavor: "f", res: "cpu", nominal: "10"}), newFlavor("f"))...), tc.grace)
			wantViolations(t, r, KindPodWithoutAdmission, tc.want...)
		})
	}
}

func TestPodChecksNeedListedPods(t *testing.T) {
	objs := objects(newWorkload("a", 1), newPod("a-1", ofWorkload("a")), newPod("plain"))
	r := check(objs)
	if !r.PodsChecked || r.Pods != 1 || len(ofKind(r, KindPodWithoutAdmission)) != 1 {
		t.Errorf("with pods listed: checked %v, %d pods kept, report:\n%s", r.PodsChecked, r.Pods, r)
	}
	if !strings.Contains(r.String(), "0 resource flavors, 1 pods of managed jobs: 1 violation") {
		t.Errorf("summary = %q", r.String())
	}
	objs.PodsListed = false
	if r := check(objs); r.PodsChecked || !r.OK() || strings.Contains(r.String(), "pods") {
		t.Errorf("without pods listed, want no pod checks, got:\n%s", r)
	}
}

func TestQuotaOfGoneJob(t *testing.T) {
	hold := admitted("cq", "f", 1, usage{"cpu": "1"})
	job := ownedBy("Job", "j", "uid-j")
	group := wlAnnotation(groupWorkloadAnnotation, "true")
	deleted := func(ago time.Duration) wlOpt { return deleting(testNow.Add(-ago)) }
	tests := []struct {
		name   string
		items  []any
		exists map[string]bool
		want   []string
	}{{
		name:   "job gone, no pod",
		items:  []any{newWorkload("a", 1, hold, job)},
		exists: map[string]bool{"ns/a": false},
		want:   []string{"Workload ns/a: holds quota in ClusterQueue cq but its Job j is gone"},
	}, {
		name:   "job there",
		items:  []any{newWorkload("a", 1, hold, job)},
		exists: map[string]bool{"ns/a": true},
	}, {
		name:  "not looked up",
		items: []any{newWorkload("a", 1, hold, job)},
	}, {
		name:   "job gone, a pod still terminates on its node",
		items:  []any{newWorkload("a", 1, hold, job), newPod("a-1", ofWorkload("a"), podDeleting())},
		exists: map[string]bool{"ns/a": false},
	}, {
		name: "job gone, its pods finished or never ran",
		items: []any{newWorkload("a", 2, hold, job), newPod("a-1", ofWorkload("a"), phase(corev1.PodSucceeded)),
			newPod("a-2", ofWorkload("a"), pending(true), podDeleting())},
		exists: map[string]bool{"ns/a": false},
		want:   []string{"Workload ns/a: holds quota in ClusterQueue cq but its Job j is gone"},
	}, {
		name:   "deleted within the grace: the manager releases it",
		items:  []any{newWorkload("a", 1, hold, job, deleted(10*time.Second))},
		exists: map[string]bool{"ns/a": false},
	}, {
		name:   "deleted long ago",
		items:  []any{newWorkload("a", 1, hold, job, deleted(time.Hour))},
		exists: map[string]bool{"ns/a": false},
		want:   []string{"Workload ns/a: holds quota in ClusterQueue cq but its Job j is gone"},
	}, {
		name:   "finished: holds nothing",
		items:  []any{newWorkload("a", 1, hold, job, finished(testNow.Add(-time.Hour)))},
		exists: map[string]bool{"ns/a": false},
	}, {
		name: "a pod group is its pods",
		items: []any{newWorkload("g", 2, hold, group), newWorkload("h", 2, hold, group),
			newPod("h-0", inGroup("h"), phase(corev1.PodSucceeded))},
		want: []string{"Workload ns/g: holds quota in ClusterQueue cq but its pod group g is gone"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(append(tc.items, newClusterQueue("cq", "", quota{flavor: "f", res: "cpu", nominal: "10"}), newFlavor("f"))...)
			objs.PodsListed = true
			objs.JobExists = tc.exists
			wantViolations(t, check(objs), KindQuotaOfGoneJob, tc.want...)
		})
	}
}
