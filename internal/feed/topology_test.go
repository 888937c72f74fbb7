package feed

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

func readyNode() *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"rack": "a"}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		}}
}

func TestNodeOf(t *testing.T) {
	n := NodeOf(readyNode())
	if !n.Schedulable || n.Allocatable[corev1.ResourceCPU] != 4000 || n.Allocatable[corev1.ResourcePods] != 110 {
		t.Fatalf("ready node: %+v", n)
	}
	cordoned := readyNode()
	cordoned.Spec.Unschedulable = true
	notReady := readyNode()
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	noCondition := readyNode()
	noCondition.Status.Conditions = nil
	for name, node := range map[string]*corev1.Node{"cordoned": cordoned, "not ready": notReady, "no Ready condition": noCondition} {
		if NodeOf(node).Schedulable {
			t.Errorf("%s node counted as schedulable", name)
		}
	}
}

func TestNodeRelevance(t *testing.T) {
	k := nodes(cache.New(lifecycle.Options{}))
	heartbeat := readyNode()
	heartbeat.Status.Conditions[0].LastHeartbeatTime = metav1.Now()
	heartbeat.ResourceVersion = "2"
	if k.relevant(readyNode(), heartbeat) {
		t.Error("a heartbeat changes nothing placement reads")
	}
	relabelled := readyNode()
	relabelled.Labels["rack"] = "b"
	tainted := readyNode()
	tainted.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	grown := readyNode()
	grown.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("8")
	for name, n := range map[string]*corev1.Node{"labels": relabelled, "taints": tainted, "allocatable": grown} {
		if !k.relevant(readyNode(), n) {
			t.Errorf("a change of %s must reach the cache", name)
		}
	}
}

func TestPodUsage(t *testing.T) {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	node, req := PodUsage(p)
	if node != "n" || req[corev1.ResourceCPU] != 1500 || req[corev1.ResourcePods] != 1 {
		t.Fatalf("running pod: %s %v", node, req)
	}
	trimmed, _ := trimPod(p.DeepCopy())
	if n2, r2 := PodUsage(trimmed.(*corev1.Pod)); n2 != node || r2[corev1.ResourceCPU] != 1500 {
		t.Fatalf("trimming changed the usage: %s %v", n2, r2)
	}
	for _, phase := range []corev1.PodPhase{corev1.PodSucceeded, corev1.PodFailed} {
		ended := p.DeepCopy()
		ended.Status.Phase = phase
		if node, _ := PodUsage(ended); node != "" {
			t.Errorf("a %s pod takes no room", phase)
		}
	}
	unbound := p.DeepCopy()
	unbound.Spec.NodeName = ""
	if node, _ := PodUsage(unbound); node != "" {
		t.Error("an unbound pod takes no room")
	}
}
