package feed

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

func TestBoundPodOf(t *testing.T) {
	pod := func(phase corev1.PodPhase, deleting bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p",
			Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}},
			Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: phase}}
		if deleting {
			now := metav1.Now()
			p.DeletionTimestamp = &now
		}
		return p
	}
	wl := types.NamespacedName{Namespace: "ns", Name: "wl"}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want cache.PodState
	}{
		"pending (bound)":        {pod(corev1.PodPending, false), cache.PodRunning},
		"running":                {pod(corev1.PodRunning, false), cache.PodRunning},
		"running, being deleted": {pod(corev1.PodRunning, true), cache.PodEnded},
		"failed":                 {pod(corev1.PodFailed, false), cache.PodEnded},
		"succeeded":              {pod(corev1.PodSucceeded, false), cache.PodSucceeded},
	} {
		got := boundPodOf(tc.pod)
		if !got.ok || got.workload != wl || got.node != "n1" || got.state != tc.want {
			t.Errorf("%s: %+v, want %s on n1 in state %d", name, got, wl, tc.want)
		}
	}
	orphan := pod(corev1.PodRunning, false)
	orphan.Annotations = nil
	if got := boundPodOf(orphan); got.ok {
		t.Errorf("a pod of no Workload: %+v", got)
	}
}
