package scenario

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const threeLevels = `
topology:
  name: topo
  levels:
  - {name: block, count: 2, nodeLabel: example.com/block}
  - {name: rack, count: 3, nodeLabel: example.com/rack}
  - {name: node, count: 4, nodeLabel: kubernetes.io/hostname, capacity: {cpu: "8"}}
resourceFlavor: {name: tas-flavor, nodeLabel: tas-node-group, topologyName: topo}
cohorts:
- className: c
  count: 1
  queuesSets:
  - className: q
    count: 1
    nominalQuota: "20"
    workloadsSets:
    - count: 1
      creationIntervalMs: 100
      workloads:
      - {className: r, runtimeMs: 10, priority: 1, request: 500m, podCount: 4, tasConstraint: required, tasLevel: example.com/rack}
`

// A topology scenario yields one node per leaf, labelled per level and
// for the flavor, Ready with the last level's capacity; a Topology of the
// levels' labels; and a flavor following it and selecting the nodes.
func TestTopologyCluster(t *testing.T) {
	cfg, err := Parse([]byte(threeLevels))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Expand()
	if len(p.Nodes) != 2*3*4 {
		t.Fatalf("%d nodes, want 24", len(p.Nodes))
	}
	n := p.Nodes[len(p.Nodes)-1]
	want := map[string]string{"example.com/block": "block-1", "example.com/rack": "rack-2", corev1.LabelHostname: "node-b1-r2-n3",
		"tas-node-group": "tas", ClassLabel: NodeClass}
	if n.Name != "node-b1-r2-n3" || len(n.Labels) != len(want) {
		t.Fatalf("last node %s, labels %v", n.Name, n.Labels)
	}
	for k, v := range want {
		if n.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, n.Labels[k], v)
		}
	}
	if p.Nodes[5].Name != "node-b0-r1-n1" || p.Nodes[5].Labels["example.com/rack"] != "rack-1" {
		t.Errorf("sixth node %s %v, want node-b0-r1-n1 in rack-1", p.Nodes[5].Name, p.Nodes[5].Labels)
	}
	names := map[string]bool{}
	for _, n := range p.Nodes {
		names[n.Name] = true
	}
	if len(names) != len(p.Nodes) {
		t.Errorf("%d distinct names for %d nodes", len(names), len(p.Nodes))
	}
	alloc := n.Status.Allocatable
	if alloc.Cpu().String() != "8" || alloc.Memory().String() != DefaultNodeMemory || alloc.Pods().Value() != NodePods {
		t.Errorf("allocatable %v, want 8 cpu, default memory, 110 pods", alloc)
	}
	if len(n.Spec.Taints) != 0 || len(n.Status.Conditions) != 1 || n.Status.Conditions[0].Type != corev1.NodeReady ||
		n.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("taints %v, conditions %v; want none and Ready", n.Spec.Taints, n.Status.Conditions)
	}

	topo := p.Topology
	if topo == nil || topo.Name != "topo" || len(topo.Spec.Levels) != 3 || topo.Spec.Levels[1].NodeLabel != "example.com/rack" ||
		topo.Spec.Levels[2].NodeLabel != corev1.LabelHostname {
		t.Fatalf("topology %+v", topo)
	}
	f := p.ResourceFlavor("ignored")
	if f.Name != "tas-flavor" || ptr.Deref(f.Spec.TopologyName, "") != "topo" || len(f.Spec.NodeLabels) != 1 ||
		f.Spec.NodeLabels["tas-node-group"] != "tas" {
		t.Fatalf("flavor %+v", f)
	}
	if cq := p.Queues[0].ClusterQueueObject(f.Name); cq.Spec.ResourceGroups[0].Flavors[0].Name != "tas-flavor" {
		t.Errorf("ClusterQueue flavor %s", cq.Spec.ResourceGroups[0].Flavors[0].Name)
	}
}

// Without a hostname level, nodes are labelled <level>-<index> at every
// level; unset capacity takes Kueue's defaults.
func TestTopologyClusterDefaults(t *testing.T) {
	cfg, err := Parse([]byte(strings.NewReplacer(
		"  - {name: node, count: 4, nodeLabel: kubernetes.io/hostname, capacity: {cpu: \"8\"}}\n", "",
	).Replace(threeLevels)))
	if err != nil {
		t.Fatal(err)
	}
	nodes := cfg.Expand().Nodes
	if len(nodes) != 6 || nodes[4].Name != "node-b1-r1" || nodes[4].Labels["example.com/rack"] != "rack-1" {
		t.Fatalf("%d nodes, fifth %s %v", len(nodes), nodes[4].Name, nodes[4].Labels)
	}
	if a := nodes[0].Status.Allocatable; a.Cpu().String() != DefaultNodeCPU || a.Memory().String() != DefaultNodeMemory {
		t.Errorf("allocatable %v, want Kueue's defaults", a)
	}
}

// A scenario without a topology has no cluster objects and keeps the
// caller's plain flavor.
func TestNoTopologyNoCluster(t *testing.T) {
	cfg, err := Parse([]byte(small + "resourceFlavor: {name: mine}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Expand()
	if p.Topology != nil || p.Nodes != nil || p.Flavor != nil {
		t.Fatalf("topology %v, %d nodes, flavor %v; want none", p.Topology, len(p.Nodes), p.Flavor)
	}
	if f := p.ResourceFlavor("bench-flavor"); f.Name != "bench-flavor" || f.Spec.TopologyName != nil || f.Spec.NodeLabels != nil {
		t.Errorf("flavor %+v, want a plain bench-flavor", f)
	}
}

func TestTopologyClusterErrors(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		{"topologyName: topo}", "topologyName: other}", "resourceFlavor"},
		{"nodeLabel: tas-node-group, ", "", "resourceFlavor.nodeLabel"},
		{"{name: rack, count: 3, nodeLabel: example.com/rack}", "{name: rack, count: 3, nodeLabel: example.com/block}", "levels[1].nodeLabel"},
		{"{name: rack, count: 3, nodeLabel: example.com/rack}", "{name: rack, count: 3, nodeLabel: kubernetes.io/hostname}", "levels[1].nodeLabel"},
		{"{name: rack,", "{name: Rack_,", "levels[1].name"},
		{"{name: block, count: 2,", "{name: block, count: 200000,", "more than"},
	} {
		_, err := Parse([]byte(strings.Replace(threeLevels, tc.old, tc.new, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming %s", tc.new, err, tc.field)
		}
	}
	if _, err := Parse([]byte(small + "resourceFlavor: {name: f, nodeLabel: g, topologyName: t}\n")); err == nil ||
		!strings.Contains(err.Error(), "resourceFlavor.topologyName") {
		t.Errorf("flavor naming a missing topology: error %v", err)
	}
}
