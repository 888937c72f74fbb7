package devcluster

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// Labels and annotations of the fake nodes.
const (
	// KwokNodeAnnotation marks a node that the kwok controller plays the
	// kubelet of (kwokctl starts kwok with this selector).
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
	// NodeGroupLabel names the node group a node of `kuota dev up` belongs
	// to. Up deletes the fake nodes carrying it that are no longer wanted.
	NodeGroupLabel = "kuota.dev/node-group"
	// FieldManager is the server-side apply field manager of Up.
	FieldManager = "kuota-dev"
)

// NodeSpec is one desired fake node.
type NodeSpec struct {
	Name      string
	Group     string
	Labels    map[string]string
	Resources corev1.ResourceList
}

// DesiredNodes lists the fake nodes the options ask for: the default group
// (Options.Nodes nodes named worker-0, worker-1, ...) then each NodeGroup.
func (o Options) DesiredNodes() []NodeSpec {
	var nodes []NodeSpec
	base := o.baseResources()
	groups := o.NodeGroups
	if o.Nodes > 0 {
		groups = append([]NodeGroup{{Name: DefaultNodeGroup, Count: o.Nodes}}, groups...)
	}
	for _, g := range groups {
		res := base.DeepCopy()
		for name, q := range g.Resources {
			if q.IsZero() {
				delete(res, name)
				continue
			}
			res[name] = q.DeepCopy()
		}
		for i := range g.Count {
			name := fmt.Sprintf("%s-%d", g.Name, i)
			labels := map[string]string{}
			maps.Copy(labels, o.NodeLabels)
			maps.Copy(labels, g.Labels)
			maps.Copy(labels, map[string]string{
				corev1.LabelHostname:   name,
				corev1.LabelOSStable:   "linux",
				corev1.LabelArchStable: "amd64",
				NodeGroupLabel:         g.Name,
			})
			nodes = append(nodes, NodeSpec{Name: name, Group: g.Name, Labels: labels, Resources: res.DeepCopy()})
		}
	}
	return nodes
}

func (o Options) baseResources() corev1.ResourceList {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    o.NodeCPU.DeepCopy(),
		corev1.ResourceMemory: o.NodeMemory.DeepCopy(),
		corev1.ResourcePods:   *resource.NewQuantity(o.PodsPerNode, resource.DecimalSI),
	}
	if o.NodeGPUs > 0 {
		res[GPUResource] = *resource.NewQuantity(o.NodeGPUs, resource.DecimalSI)
	}
	return res
}

// ApplyConfig is the node as applied to the main resource: labels,
// annotation and status. The status is kept by the API server only when the
// node is created (Nodes accept status on create, as a kubelet registering
// itself does); that way kwok never sees the node without a Ready condition
// and never fills in its own default capacity.
func (n NodeSpec) ApplyConfig() *corev1ac.NodeApplyConfiguration {
	return corev1ac.Node(n.Name).
		WithLabels(n.Labels).
		WithAnnotations(map[string]string{KwokNodeAnnotation: kwokNodeValue}).
		WithStatus(n.status())
}

// StatusApplyConfig is the node's status as applied to the status
// subresource, which updates capacity on an existing node.
func (n NodeSpec) StatusApplyConfig() *corev1ac.NodeApplyConfiguration {
	return corev1ac.Node(n.Name).WithStatus(n.status())
}

func (n NodeSpec) status() *corev1ac.NodeStatusApplyConfiguration {
	return corev1ac.NodeStatus().
		WithCapacity(n.Resources.DeepCopy()).
		WithAllocatable(n.Resources.DeepCopy()).
		WithPhase(corev1.NodeRunning).
		WithNodeInfo(corev1ac.NodeSystemInfo().
			WithArchitecture("amd64").
			WithOperatingSystem("linux").
			WithKubeletVersion("kwok")).
		WithConditions(corev1ac.NodeCondition().
			WithType(corev1.NodeReady).
			WithStatus(corev1.ConditionTrue).
			WithReason("KubeletReady").
			WithMessage("kwok is posting ready status"))
}
