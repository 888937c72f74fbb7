package jobs

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/tas"
)

const rackLabel = "example.com/topology-rack"

// tasQueues creates a namespace, the nodes, Topology and flavor of tasNodes,
// a ClusterQueue of 100 CPUs (far more than the nodes hold: the topology,
// not the quota, limits admission) and LocalQueue "lq".
func tasQueues(t *testing.T, preemption *kueue.ClusterQueuePreemption) (ns string, hosts map[string]string) {
	t.Helper()
	ns, fl, hosts := tasNodes(t)
	cq := ns + "-cq"
	create(t,
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{}, Preemption: preemption,
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}},
	)
	return ns, hosts
}

// tasNodes creates a namespace, two racks (a, b) of two 4-CPU nodes each,
// Ready and labelled pool=<ns>-tas, a Topology rack -> hostname and the TAS
// flavor fl over those nodes.
func tasNodes(t *testing.T) (ns, fl string, hosts map[string]string) {
	t.Helper()
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "tas")
	if err != nil {
		t.Fatal(err)
	}
	fl = ns + "-tas"
	topo, pool := ns+"-topo", ns+"-tas"
	hosts = map[string]string{}
	for _, rack := range []string{"a", "b"} {
		for i := 1; i <= 2; i++ {
			name := fmt.Sprintf("%s-%s%d", ns, rack, i)
			hosts[name] = rack
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"pool": pool, rackLabel: rack, corev1.LabelHostname: name}}}
			create(t, node)
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), node) })
			node.Status = corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
			}
			if err := env.Client.Status().Update(ctx, node); err != nil {
				t.Fatal(err)
			}
			// The API server taints a new node not-ready; with no node
			// controller here, the test lifts the taint as it would.
			node.Spec.Taints = nil
			if err := env.Client.Update(ctx, node); err != nil {
				t.Fatal(err)
			}
		}
	}
	create(t,
		&kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: topo}, Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{
			{NodeLabel: rackLabel}, {NodeLabel: corev1.LabelHostname}}}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"pool": pool}, TopologyName: (*kueue.TopologyReference)(&topo)}},
	)
	return ns, fl, hosts
}

// occupy runs a pod of no Workload (as the kube-scheduler alone would
// place it) asking for cpu on node.
func occupy(t *testing.T, ns, node, cpu string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "other-"}, Spec: corev1.PodSpec{
		NodeName: node,
		Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	create(t, p)
	p.Status.Phase = corev1.PodRunning
	if err := env.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// placedRacks returns the racks of a Workload's topology assignment and its
// pod count, or an error while it has none.
func placedRacks(t *testing.T, ns, job string, hosts map[string]string) (map[string]bool, int32, error) {
	t.Helper()
	wl := workloadOf(t, getJob(t, ns, job))
	if wl == nil {
		return nil, 0, fmt.Errorf("no Workload")
	}
	if wl.Status.Admission == nil {
		return nil, 0, fmt.Errorf("not admitted: QuotaReserved %+v", condition(wl, kueue.WorkloadQuotaReserved))
	}
	ta := wl.Status.Admission.PodSetAssignments[0].TopologyAssignment
	if ta == nil {
		return nil, 0, fmt.Errorf("admitted without a topology assignment")
	}
	if len(ta.Levels) != 1 || ta.Levels[0] != corev1.LabelHostname {
		return nil, 0, fmt.Errorf("assignment levels %v, want only the hostname", ta.Levels)
	}
	doms, err := tas.Domains(ta)
	if err != nil {
		return nil, 0, err
	}
	racks, total := map[string]bool{}, int32(0)
	for _, d := range doms {
		racks[hosts[d.Values[0]]] = true
		total += d.Count
	}
	return racks, total, nil
}

// Jobs asking for one rack are placed in one rack each, counting the pods
// that run on the nodes without Kuota; a job no rack can hold waits with
// TopologyPlacementFailed though quota is free, and is placed once a rack
// frees.
func TestJobsArePlacedByTopology(t *testing.T) {
	startManager(t)
	ns, hosts := tasQueues(t, nil)
	// A pod placed by the kube-scheduler alone takes 2 CPUs on rack b.
	occupy(t, ns, ns+"-b1", "2")
	rackJob := func(name string, pods int32) {
		j := newJob(ns, name, "lq", pods, "1")
		j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-required-topology": rackLabel}
		create(t, j)
	}

	// Rack b has 6 free CPUs, rack a 8: the tighter rack b fits 6 pods.
	rackJob("first", 6)
	eventually(t, "first placed in rack b", func() error {
		racks, total, err := placedRacks(t, ns, "first", hosts)
		if err != nil {
			return err
		}
		if total != 6 || len(racks) != 1 || !racks["b"] {
			return fmt.Errorf("placed %d pods in racks %v, want 6 in rack b (the other pod leaves it exactly 6 CPUs)", total, racks)
		}
		return nil
	})
	rackJob("second", 6)
	eventually(t, "second placed in rack a", func() error {
		racks, total, err := placedRacks(t, ns, "second", hosts)
		if err != nil {
			return err
		}
		if total != 6 || len(racks) != 1 || !racks["a"] {
			return fmt.Errorf("placed %d pods in racks %v, want 6 in rack a", total, racks)
		}
		return nil
	})
	rackJob("third", 3)
	eventually(t, "third waits with TopologyPlacementFailed", func() error {
		wl := workloadOf(t, getJob(t, ns, "third"))
		if wl == nil {
			return fmt.Errorf("no Workload")
		}
		c := condition(wl, kueue.WorkloadQuotaReserved)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "TopologyPlacementFailed" {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		if !strings.Contains(c.Message, rackLabel) {
			return fmt.Errorf("the message should name the level: %q", c.Message)
		}
		return nil
	})

	// The first job ends: rack b frees and the third job takes it.
	complete(t, ns, "first")
	eventually(t, "third placed in rack b", func() error {
		racks, total, err := placedRacks(t, ns, "third", hosts)
		if err != nil {
			return err
		}
		if total != 3 || !racks["b"] || len(racks) != 1 {
			return fmt.Errorf("placed %d pods in racks %v, want 3 in rack b", total, racks)
		}
		return nil
	})
}

// A high-priority job that fits the quota but no rack preempts the newer
// of two low-priority jobs filling the racks, and takes its rack.
func TestTopologyPreemptionFreesARack(t *testing.T) {
	startManager(t)
	ns, hosts := tasQueues(t, &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority})
	create(t,
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-low"}, Value: 0},
		&kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-high"}, Value: 100})
	rackJob := func(name, priority string) {
		j := newJob(ns, name, "lq", 8, "1")
		j.Labels["kueue.x-k8s.io/priority-class"] = ns + "-" + priority
		j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-required-topology": rackLabel}
		create(t, j)
	}
	placedIn := func(job string) string {
		racks, _, err := placedRacks(t, ns, job, hosts)
		if err != nil || len(racks) != 1 {
			return ""
		}
		for r := range racks {
			return r
		}
		return ""
	}
	rackJob("low-first", "low")
	eventually(t, "low-first placed", func() error {
		if placedIn("low-first") == "" {
			return fmt.Errorf("not placed")
		}
		return nil
	})
	// Admission times are stored in seconds: the second job must be
	// admitted in a later second to be the newer one.
	time.Sleep(1100 * time.Millisecond)
	rackJob("low-second", "low")
	eventually(t, "low-second placed", func() error {
		if placedIn("low-second") == "" {
			return fmt.Errorf("not placed")
		}
		return nil
	})
	freed := placedIn("low-second")
	rackJob("high", "high")
	eventually(t, "high placed in the rack of the newer low-priority job", func() error {
		if got := placedIn("high"); got != freed {
			wl := workloadOf(t, getJob(t, ns, "high"))
			return fmt.Errorf("high in rack %q, want %q; QuotaReserved %+v", got, freed, condition(wl, kueue.WorkloadQuotaReserved))
		}
		return nil
	})
	second := workloadOf(t, getJob(t, ns, "low-second"))
	if c := condition(second, kueue.WorkloadPreempted); c == nil || c.Status != metav1.ConditionTrue || c.Reason != kueue.InClusterQueueReason {
		t.Fatalf("low-second: Preempted %+v", c)
	}
	if c := condition(workloadOf(t, getJob(t, ns, "low-first")), kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		t.Fatalf("low-first was evicted too: %+v", c)
	}
}

// After a restart the placements of admitted workloads are counted from
// their assignments before anything new is placed: no rack is given twice.
func TestTopologyPlacementsSurviveARestart(t *testing.T) {
	startManager(t)
	ns, hosts := tasQueues(t, nil)
	rackJob := func(name string) {
		j := newJob(ns, name, "lq", 8, "1")
		j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-required-topology": rackLabel}
		create(t, j)
	}
	rackOf := func(job string) string {
		racks, _, err := placedRacks(t, ns, job, hosts)
		if err != nil || len(racks) != 1 {
			return ""
		}
		for r := range racks {
			return r
		}
		return ""
	}
	rackJob("before")
	eventually(t, "before placed", func() error {
		if rackOf("before") == "" {
			return fmt.Errorf("not placed")
		}
		return nil
	})
	if err := current.Stop(); err != nil {
		t.Fatal(err)
	}
	startManager(t)
	rackJob("after")
	eventually(t, "after placed in the other rack", func() error {
		a, b := rackOf("before"), rackOf("after")
		if b == "" || a == b {
			var st any
			if wl := workloadOf(t, getJob(t, ns, "after")); wl != nil {
				st = condition(wl, kueue.WorkloadQuotaReserved)
			}
			return fmt.Errorf("before in rack %q, after in rack %q (QuotaReserved %+v)", a, b, st)
		}
		return nil
	})
	rackJob("third")
	eventually(t, "third waits: both racks are taken", func() error {
		wl := workloadOf(t, getJob(t, ns, "third"))
		if wl == nil {
			return fmt.Errorf("third has no Workload")
		}
		if c := condition(wl, kueue.WorkloadQuotaReserved); c == nil || c.Reason != "TopologyPlacementFailed" {
			return fmt.Errorf("third: QuotaReserved %+v", c)
		}
		return nil
	})
}
