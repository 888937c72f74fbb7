package leaderworkerset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func TestPodSetsOfAGroup(t *testing.T) {
	lws := &lwsv1.LeaderWorkerSet{ObjectMeta: metav1.ObjectMeta{Name: "infer", UID: "u"},
		Spec: lwsv1.LeaderWorkerSetSpec{LeaderWorkerTemplate: lwsv1.LeaderWorkerTemplate{Size: ptr.To[int32](4)}}}
	if got := PodSets(lws); len(got) != 1 || got[0].Name != kueue.DefaultPodSetName || got[0].Count != 4 {
		t.Errorf("without a leader template: %v, want main x4", got)
	}
	lws.Spec.LeaderWorkerTemplate.LeaderTemplate = &corev1.PodTemplateSpec{}
	if got := PodSets(lws); len(got) != 2 || got[0].Name != LeaderPodSet || got[0].Count != 1 || got[1].Name != WorkerPodSet || got[1].Count != 3 {
		t.Errorf("with a leader template: %v, want leader x1, worker x3", got)
	}
	lws.Spec.LeaderWorkerTemplate.Size = ptr.To[int32](1)
	if got := PodSets(lws); len(got) != 1 || got[0].Name != LeaderPodSet {
		t.Errorf("a group of 1 with a leader: %v, want the leader alone", got)
	}
	if a, b := WorkloadName(lws, 0), WorkloadName(lws, 1); a == b || !strings.HasPrefix(a, "leaderworkerset-infer-0-") {
		t.Errorf("Workload names %q and %q", a, b)
	}
}

func TestGroupIndexOfLeadersAndWorkers(t *testing.T) {
	leader := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "infer-2"}}
	if i, err := groupIndex(leader); err != nil || i != 2 {
		t.Errorf("leader infer-2: %d %v, want group 2 from its ordinal", i, err)
	}
	worker := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "infer-2-1", Labels: map[string]string{lwsv1.GroupIndexLabelKey: "2"},
		Annotations: map[string]string{lwsv1.LeaderPodNameAnnotationKey: "infer-2"}}}
	if i, err := groupIndex(worker); err != nil || i != 2 {
		t.Errorf("worker: %d %v, want group 2", i, err)
	}
	lost := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{lwsv1.LeaderPodNameAnnotationKey: "y"}}}
	if _, err := groupIndex(lost); err == nil {
		t.Error("a worker without a group index is an error")
	}
}
