package lifecycle

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
)

func TestAssignedNodesReadsHostnameAssignments(t *testing.T) {
	b := newWL().reserved("cq", true)
	b.wl.Status.Admission.PodSetAssignments[0].TopologyAssignment = tas.Encode([]string{corev1.LabelHostname},
		[]tas.Domain{{Values: []string{"n1"}, Count: 1}, {Values: []string{"n2"}, Count: 1}})
	got := AssignedNodes(b.wl.Status.Admission, tas.Nodes)
	if len(got) != 2 || !slices.Equal(got["n1"], []kueue.PodSetReference{"main"}) || !slices.Equal(got["n2"], []kueue.PodSetReference{"main"}) {
		t.Errorf("assigned nodes %v, want n1 and n2 for main", got)
	}
	b.wl.Status.Admission.PodSetAssignments[0].TopologyAssignment = tas.Encode([]string{"rack"}, []tas.Domain{{Values: []string{"r1"}, Count: 2}})
	if got := AssignedNodes(b.wl.Status.Admission, tas.Nodes); got != nil {
		t.Errorf("a rack-level assignment names nodes: %v", got)
	}
}

func TestFailedNodesEvictTheWorkload(t *testing.T) {
	ready := &state.Node{Name: "n1", Schedulable: true, Ready: true}
	notReady := &state.Node{Name: "n1"}
	taint := func(key string, effect corev1.TaintEffect, added time.Time) *state.Node {
		return &state.Node{Name: "n1", Taints: []corev1.Taint{{Key: key, Effect: effect, TimeAdded: &metav1.Time{Time: added}}}}
	}
	tests := map[string]struct {
		nodes       map[string]NodeCheck
		evict       bool
		wantRecheck time.Duration
	}{
		"healthy nodes":             {nodes: map[string]NodeCheck{"n1": {Node: ready}}},
		"a node that is gone":       {nodes: map[string]NodeCheck{"n1": {Node: ready}, "n2": {}}, evict: true},
		"an untolerated NoExecute":  {nodes: map[string]NodeCheck{"n1": {Node: taint("maintenance", corev1.TaintEffectNoExecute, t0)}}, evict: true},
		"a NoSchedule taint (kept)": {nodes: map[string]NodeCheck{"n1": {Node: taint("maintenance", corev1.TaintEffectNoSchedule, t0)}}},
		"a tolerated NoExecute": {nodes: map[string]NodeCheck{"n1": {Node: taint("gpu", corev1.TaintEffectNoExecute, t0),
			Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}}},
		"not ready for a minute: waits out the grace": {nodes: map[string]NodeCheck{"n1": {Node: taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute, t0.Add(-time.Minute))}},
			wantRecheck: 4 * time.Minute},
		"not ready, tolerated for 30 s, a minute ago": {nodes: map[string]NodeCheck{"n1": {Node: taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute, t0.Add(-time.Minute)),
			Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)}}}},
			evict: true},
		"not ready, tolerated for 120 s, a minute ago": {nodes: map[string]NodeCheck{"n1": {Node: taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute, t0.Add(-time.Minute)),
			Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](120)}}}},
			wantRecheck: time.Minute},
		"not ready, tolerated for ever": {nodes: map[string]NodeCheck{"n1": {Node: taint(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute, t0.Add(-time.Hour)),
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}},
		"the shortest matching toleration wins": {nodes: map[string]NodeCheck{"n1": {Node: taint("gpu", corev1.TaintEffectNoExecute, t0.Add(-20*time.Second)),
			Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}, {Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](10)}}}},
			evict: true},
		"not ready, pods not listed yet":              {nodes: map[string]NodeCheck{"n1": {Node: notReady}}},
		"not ready, a pod still runs":                 {nodes: map[string]NodeCheck{"n1": {Node: notReady, Pods: &NodePods{Running: 1, Ended: 1}}}},
		"not ready, its pod failed":                   {nodes: map[string]NodeCheck{"n1": {Node: notReady, Pods: &NodePods{Ended: 1}}}, evict: true},
		"not ready, no pod of it there (yet)":         {nodes: map[string]NodeCheck{"n1": {Node: notReady, Pods: &NodePods{}}}},
		"not ready, its pods succeeded":               {nodes: map[string]NodeCheck{"n1": {Node: notReady, Pods: &NodePods{Succeeded: 2}}}},
		"ready, its pod failed (the job replaces it)": {nodes: map[string]NodeCheck{"n1": {Node: ready, Pods: &NodePods{Ended: 1}}}},
		"unreachable past the grace":                  {nodes: map[string]NodeCheck{"n1": {Node: taint(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute, t0.Add(-NodeGrace))}}, evict: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v := healthyView()
			v.Nodes = tc.nodes
			s := Next(newWL().reserved("cq", true).owned().wl, v, &Options{}, t0)
			if !tc.evict {
				if s.Action == Evict {
					t.Fatalf("evicted: %+v", s)
				}
				if s.After != tc.wantRecheck {
					t.Errorf("looks again after %s, want %s", s.After, tc.wantRecheck)
				}
				return
			}
			if s.Action != Evict || s.Reason != kueue.WorkloadEvictedByNodeFailures || len(s.Nodes) != 1 || !strings.Contains(s.Message, s.Nodes[0]) {
				t.Errorf("step %+v, want an eviction for NodeFailures naming the node", s)
			}
			if s := Next(newWL().reserved("cq", true).owned().wl, v, &Options{ReplaceFailedNodes: true}, t0); s.Action != ReplaceNodes ||
				s.Reason != kueue.WorkloadEvictedByNodeFailures || len(s.Nodes) != 1 {
				t.Errorf("with node replacement: step %+v, want ReplaceNodes for the node", s)
			}
		})
	}
}
