package devcluster

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestDesiredNodes(t *testing.T) {
	o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
	o.Nodes = 2
	o.NodeGPUs = 0
	o.NodeLabels = map[string]string{"tier": "std", "zone": "a"}
	o.NodeGroups = []NodeGroup{{
		Name:   "gpu",
		Count:  1,
		Labels: map[string]string{"tier": "gpu", "accelerator": "a100"},
		Resources: corev1.ResourceList{
			"nvidia.com/gpu": resource.MustParse("8"),
			"cpu":            resource.MustParse("64"),
			"pods":           resource.MustParse("0"), // zero removes the resource
		},
	}}
	nodes := o.DesiredNodes()

	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
	}
	if want := []string{"worker-0", "worker-1", "gpu-0"}; !slices.Equal(names, want) {
		t.Fatalf("names = %v, want %v", names, want)
	}

	wantWorker := map[string]string{
		"tier": "std", "zone": "a", NodeGroupLabel: "worker",
		corev1.LabelHostname: "worker-1", corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
	}
	if !maps.Equal(nodes[1].Labels, wantWorker) {
		t.Errorf("worker-1 labels = %v, want %v", nodes[1].Labels, wantWorker)
	}
	wantWorkerRes := corev1.ResourceList{"cpu": resource.MustParse("32"), "memory": resource.MustParse("256Gi"), "pods": resource.MustParse("110")}
	if !sameResources(nodes[0].Resources, wantWorkerRes) {
		t.Errorf("worker-0 resources = %v, want %v (no nvidia.com/gpu when the count is 0)", nodes[0].Resources, wantWorkerRes)
	}

	wantGPU := map[string]string{
		"tier": "gpu", "zone": "a", "accelerator": "a100", NodeGroupLabel: "gpu",
		corev1.LabelHostname: "gpu-0", corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
	}
	if !maps.Equal(nodes[2].Labels, wantGPU) {
		t.Errorf("gpu-0 labels = %v, want %v", nodes[2].Labels, wantGPU)
	}
	wantGPURes := corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("256Gi"), "nvidia.com/gpu": resource.MustParse("8")}
	if !sameResources(nodes[2].Resources, wantGPURes) {
		t.Errorf("gpu-0 resources = %v, want %v", nodes[2].Resources, wantGPURes)
	}
}

func TestDesiredNodesGPUsAndEmpty(t *testing.T) {
	o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
	o.Nodes, o.NodeGPUs, o.PodsPerNode = 1, 4, 20
	nodes := o.DesiredNodes()
	want := corev1.ResourceList{"cpu": resource.MustParse("32"), "memory": resource.MustParse("256Gi"), "pods": resource.MustParse("20"), GPUResource: resource.MustParse("4")}
	if len(nodes) != 1 || !sameResources(nodes[0].Resources, want) {
		t.Fatalf("nodes = %+v, want one node with %v", nodes, want)
	}

	o.Nodes = 0
	if got := o.DesiredNodes(); len(got) != 0 {
		t.Errorf("DesiredNodes() with no nodes = %v", got)
	}
}

func TestNodeApplyConfig(t *testing.T) {
	n := NodeSpec{
		Name:      "worker-0",
		Group:     "worker",
		Labels:    map[string]string{"a": "b"},
		Resources: corev1.ResourceList{"cpu": resource.MustParse("2"), GPUResource: resource.MustParse("1")},
	}
	ac := n.ApplyConfig()
	if *ac.Name != "worker-0" || *ac.Kind != "Node" || *ac.APIVersion != "v1" {
		t.Fatalf("apply config identity = %s %s %s", *ac.APIVersion, *ac.Kind, *ac.Name)
	}
	if ac.Annotations[KwokNodeAnnotation] != "fake" {
		t.Errorf("annotations = %v, want %s: fake", ac.Annotations, KwokNodeAnnotation)
	}
	if !maps.Equal(ac.Labels, n.Labels) {
		t.Errorf("labels = %v, want %v", ac.Labels, n.Labels)
	}
	checkStatus(t, ac.Status.Capacity, ac.Status.Allocatable, n.Resources)
	if len(ac.Status.Conditions) != 1 || *ac.Status.Conditions[0].Type != corev1.NodeReady ||
		*ac.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("conditions = %+v, want Ready=True", ac.Status.Conditions)
	}
	if *ac.Status.Phase != corev1.NodeRunning {
		t.Errorf("phase = %s, want Running (kwok's heartbeat stage selects on it)", *ac.Status.Phase)
	}

	st := n.StatusApplyConfig()
	if len(st.Labels) != 0 || len(st.Annotations) != 0 {
		t.Errorf("status apply config carries metadata: %v %v", st.Labels, st.Annotations)
	}
	checkStatus(t, st.Status.Capacity, st.Status.Allocatable, n.Resources)

	// The apply configs own copies: changing them leaves the spec alone.
	(*ac.Status.Capacity)["cpu"] = resource.MustParse("100")
	if q := n.Resources["cpu"]; q.String() != "2" {
		t.Errorf("spec resources changed through the apply config: %v", n.Resources)
	}
}

func checkStatus(t *testing.T, capacity, allocatable *corev1.ResourceList, want corev1.ResourceList) {
	t.Helper()
	if capacity == nil || !sameResources(*capacity, want) {
		t.Errorf("capacity = %v, want %v", capacity, want)
	}
	if allocatable == nil || !sameResources(*allocatable, want) {
		t.Errorf("allocatable = %v, want %v", allocatable, want)
	}
}
