package scenario

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// The cluster of a topology-aware scenario, built as Kueue's scalability
// runner builds it: one node per leaf of the topology's levels, named
// node-<first letter of each level's name><index>... (node-b0-r2-n15),
// labelled <level nodeLabel>=<level name>-<index> for each level and
// <resourceFlavor.nodeLabel>=tas, Ready, untainted, with the last level's
// capacity (96 CPUs and 256Gi when unset) and 110 pods allocatable. One
// departure: a kubernetes.io/hostname level is labelled with the node's
// name, as a kubelet labels it. Kueue's runner writes node-<index> there,
// which repeats in every rack; hostnames identify nodes in topology
// assignments, so repeated ones would merge nodes of different racks.

// Defaults and fixed values of the scenario's nodes.
const (
	DefaultNodeCPU    = "96"
	DefaultNodeMemory = "256Gi"
	NodePods          = 110
	// FlavorNodeValue is the value of the flavor's node label on the nodes.
	FlavorNodeValue = "tas"
	// MaxNodes bounds the nodes a topology may describe.
	MaxNodes = 100000
)

// Class label values of the cluster objects (ClassLabel), which mark what
// the harness created.
const (
	TopologyClass = "topology"
	FlavorClass   = "flavor"
	NodeClass     = "node"
)

// TopologyObject builds the scenario's Topology: its levels' node labels,
// widest first. Nil without a topology.
func (c *Config) TopologyObject() *kueue.Topology {
	if c.Topology == nil {
		return nil
	}
	t := &kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: c.Topology.Name, Labels: map[string]string{ClassLabel: TopologyClass}}}
	for _, l := range c.Topology.Levels {
		t.Spec.Levels = append(t.Spec.Levels, kueue.TopologyLevel{NodeLabel: l.NodeLabel})
	}
	return t
}

// FlavorObject builds the ResourceFlavor of a topology scenario: named by
// resourceFlavor.name, selecting the nodes by resourceFlavor.nodeLabel=tas
// when set, following the topology. Nil without a topology: the
// scenario's ClusterQueues then use a plain flavor the caller names (a
// resourceFlavor section alone does not change that).
func (c *Config) FlavorObject() *kueue.ResourceFlavor {
	if c.Topology == nil || c.ResourceFlavor == nil {
		return nil
	}
	f := &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: c.ResourceFlavor.Name, Labels: map[string]string{ClassLabel: FlavorClass}}}
	if c.ResourceFlavor.NodeLabel != "" {
		f.Spec.NodeLabels = map[string]string{c.ResourceFlavor.NodeLabel: FlavorNodeValue}
	}
	if c.ResourceFlavor.TopologyName != "" {
		f.Spec.TopologyName = ptr.To(kueue.TopologyReference(c.ResourceFlavor.TopologyName))
	}
	return f
}

// NodeObjects builds the nodes of the topology, in the order of their
// level indexes. Nil without a topology.
func (c *Config) NodeObjects() []corev1.Node {
	t := c.Topology
	if t == nil || len(t.Levels) == 0 {
		return nil
	}
	nodes := make([]corev1.Node, 0, t.nodeCount())
	template := c.nodeTemplate()
	idx := make([]int, len(t.Levels))
	for {
		nodes = append(nodes, t.node(template, idx))
		// Next leaf: count up the indexes, the last level fastest.
		i := len(idx) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < t.Levels[i].Count {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nodes
		}
	}
}

// nodeTemplate is what every node of the scenario has: the flavor's and
// the class label, the allocatable resources, Ready.
func (c *Config) nodeTemplate() corev1.Node {
	capacity := c.Topology.Levels[len(c.Topology.Levels)-1].Capacity
	cpu, memory := capacity.CPU, capacity.Memory
	if cpu == "" {
		cpu = DefaultNodeCPU
	}
	if memory == "" {
		memory = DefaultNodeMemory
	}
	labels := map[string]string{ClassLabel: NodeClass}
	if c.ResourceFlavor != nil && c.ResourceFlavor.NodeLabel != "" {
		labels[c.ResourceFlavor.NodeLabel] = FlavorNodeValue
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods: *resource.NewQuantity(NodePods, resource.DecimalSI)}
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Status: corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}},
	}
}

// node builds the node at the level indexes idx.
func (t *Topology) node(template corev1.Node, idx []int) corev1.Node {
	n := *template.DeepCopy()
	var name strings.Builder
	name.WriteString("node")
	for i, l := range t.Levels {
		fmt.Fprintf(&name, "-%c%d", l.Name[0], idx[i])
	}
	n.Name = name.String()
	for i, l := range t.Levels {
		if l.NodeLabel == corev1.LabelHostname {
			n.Labels[l.NodeLabel] = n.Name
		} else {
			n.Labels[l.NodeLabel] = fmt.Sprintf("%s-%d", l.Name, idx[i])
		}
	}
	return n
}

// nodeCount is the product of the level counts.
func (t *Topology) nodeCount() int {
	n := 1
	for _, l := range t.Levels {
		n *= max(l.Count, 0)
		if n > MaxNodes {
			return MaxNodes + 1
		}
	}
	return n
}
