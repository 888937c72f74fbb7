package driver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/bench/internal/benchenv"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/internal/scenario"
)

const twoRacks = `
topology:
  name: racks
  levels:
  - {name: rack, count: 2, nodeLabel: example.com/rack}
  - {name: node, count: 2, nodeLabel: kubernetes.io/hostname, capacity: {cpu: "4", memory: 16Gi}}
resourceFlavor: {name: tas-flavor, nodeLabel: tas-node-group, topologyName: racks}
cohorts:
- className: c
  count: 1
  queuesSets:
  - className: q
    count: 1
    nominalQuota: "100"
    workloadsSets:
    - count: 1
      creationIntervalMs: 10
      workloads:
      - {className: rack, runtimeMs: 1000, priority: 1, request: "1", podCount: 8, tasConstraint: required, tasLevel: example.com/rack}
`

func topologyPlan(t *testing.T) *scenario.Plan {
	t.Helper()
	cfg, err := scenario.Parse([]byte(twoRacks))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Expand()
}

// apiServerNodes acts on node creation as the API server does: the node's
// status is not taken from the create request, and the not-ready taint is
// added (TaintNodesByCondition).
var apiServerNodes = interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	if n, ok := obj.(*corev1.Node); ok {
		n.Status = corev1.NodeStatus{}
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule})
	}
	return c.Create(ctx, obj, opts...)
}}

// Setup of a topology scenario creates the nodes Ready, untainted and
// with their allocatable resources, the Topology, and the TAS flavor the
// ClusterQueues use.
func TestSetupCreatesTheTopologyCluster(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{kueue.AddToScheme, corev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&corev1.Node{}).WithInterceptorFuncs(apiServerNodes).Build()
	plan := topologyPlan(t)
	d := &Driver{opts: Options{Plan: plan, Flavor: "tas-flavor", Workers: 3}, client: c, rec: newRecorder(plan, "tas-flavor")}
	for _, q := range d.rec.queues {
		q.Active = true // as the manager would report
	}
	ctx := context.Background()
	if err := d.Setup(ctx, time.Second); err != nil {
		t.Fatal(err)
	}

	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{ClassLabel: scenario.NodeClass}); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 4 {
		t.Fatalf("%d nodes, want 4", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		ready := len(n.Status.Conditions) == 1 && n.Status.Conditions[0].Type == corev1.NodeReady && n.Status.Conditions[0].Status == corev1.ConditionTrue
		if !ready || len(n.Spec.Taints) != 0 || n.Status.Allocatable.Cpu().String() != "4" || n.Status.Allocatable.Pods().Value() != 110 ||
			n.Labels["tas-node-group"] != "tas" || n.Labels["example.com/rack"] == "" {
			t.Errorf("node %s: labels %v, taints %v, status %+v", n.Name, n.Labels, n.Spec.Taints, n.Status)
		}
	}
	var topo kueue.Topology
	if err := c.Get(ctx, client.ObjectKey{Name: "racks"}, &topo); err != nil || len(topo.Spec.Levels) != 2 {
		t.Fatalf("topology %+v, %v", topo, err)
	}
	var flavors kueue.ResourceFlavorList
	if err := c.List(ctx, &flavors); err != nil {
		t.Fatal(err)
	}
	if len(flavors.Items) != 1 || flavors.Items[0].Name != "tas-flavor" || ptr.Deref(flavors.Items[0].Spec.TopologyName, "") != "racks" ||
		flavors.Items[0].Spec.NodeLabels["tas-node-group"] != "tas" {
		t.Fatalf("flavors %+v, want tas-flavor only", flavors.Items)
	}
	var cq kueue.ClusterQueue
	if err := c.Get(ctx, client.ObjectKey{Name: plan.Queues[0].Name}, &cq); err != nil {
		t.Fatal(err)
	}
	if f := cq.Spec.ResourceGroups[0].Flavors[0].Name; f != "tas-flavor" {
		t.Errorf("ClusterQueue uses flavor %s, want tas-flavor", f)
	}
}

// The driver follows the usage of the plan's own flavor, whatever plain
// flavor it was told to name; a plan without one keeps the plain flavor.
func TestOptionsUseThePlansFlavor(t *testing.T) {
	o := Options{Plan: topologyPlan(t), Flavor: "other"}
	o.defaults()
	if o.Flavor != "tas-flavor" {
		t.Errorf("flavor %q, want tas-flavor", o.Flavor)
	}
	o = Options{Plan: &scenario.Plan{}}
	o.defaults()
	if o.Flavor != DefaultFlavor || o.Workers != DefaultWorkers {
		t.Errorf("options %+v, want the defaults", o)
	}
}

// On a real API server (when the control-plane binaries are there), the
// nodes end up Ready with their allocatable resources and without the
// not-ready taint the server adds at creation, and the TAS flavor passes
// the CRD's validation.
func TestSetupCreatesTheTopologyClusterOnAnAPIServer(t *testing.T) {
	tools := os.Getenv("KUBEBUILDER_ASSETS")
	if tools == "" {
		tools, _ = paths.ToolsBin()
	}
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(tools, bin)); tools == "" || err != nil {
			t.Skipf("no control-plane binaries (run 'make tools'): %s", filepath.Join(tools, bin))
		}
	}
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cp, err := benchenv.StartControlPlane(benchenv.ControlPlaneOptions{ToolsBin: tools, CRDs: filepath.Join(root, "config", "crd", "bases"),
		Dir: t.TempDir(), Scheme: scheme, MaxInflight: 400, MaxMutatingInflight: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	plan := topologyPlan(t)
	d := &Driver{opts: Options{Plan: plan, Flavor: "tas-flavor", Workers: 4}, client: c, rec: newRecorder(plan, "tas-flavor")}
	for _, q := range d.rec.queues {
		q.Active = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Setup(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{ClassLabel: scenario.NodeClass}); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 4 {
		t.Fatalf("%d nodes, want 4", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		ready := slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
			return c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue
		})
		if !ready || len(n.Spec.Taints) != 0 || n.Status.Allocatable.Cpu().String() != "4" {
			t.Errorf("node %s: taints %v, allocatable %v, conditions %v", n.Name, n.Spec.Taints, n.Status.Allocatable, n.Status.Conditions)
		}
	}
}
