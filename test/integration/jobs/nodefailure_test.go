package jobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/tas"
)

// Without node replacement (gate TASFailedNodeReplacement off), a job
// placed by topology whose node is deleted is evicted (NodeFailures, the
// node in status.unhealthyNodes), queued again at once, and placed on the
// nodes left. One whose node gets an untolerated NoExecute taint is
// evicted the same way; one on a node tainted NoSchedule keeps running.
func TestJobsOnFailedNodesArePlacedAgain(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.FeatureGates = map[string]bool{"TASFailedNodeReplacement": false}
	})
	ns, _ := tasQueues(t, nil)
	rackJob := func(name string, pods int32) {
		j := newJob(ns, name, "lq", pods, "4")
		j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-required-topology": rackLabel}
		create(t, j)
	}
	rackJob("gone", 1)
	first := placedNode(t, ns, "gone")
	if err := env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: first}}); err != nil {
		t.Fatal(err)
	}
	waitEvictedFor(t, ns, "gone", first)
	eventually(t, "the job is placed on another node", func() error {
		if n, err := currentNode(t, ns, "gone"); err != nil || n == first {
			return fmt.Errorf("node %q (%v)", n, err)
		}
		return nil
	})

	rackJob("tainted", 1)
	second := placedNode(t, ns, "tainted")
	taintNode(t, second, corev1.Taint{Key: "example.com/broken", Effect: corev1.TaintEffectNoExecute})
	waitEvictedFor(t, ns, "tainted", second)

	// Two of the four nodes are gone or tainted, and the two jobs run on
	// the others: they end, to leave room.
	complete(t, ns, "gone")
	complete(t, ns, "tainted")
	rackJob("cordoned", 1)
	third := placedNode(t, ns, "cordoned")
	taintNode(t, third, corev1.Taint{Key: "example.com/draining", Effect: corev1.TaintEffectNoSchedule})
	afterCycles(t, func() error {
		wl := workloadOf(t, getJob(t, ns, "cordoned"))
		if c := condition(wl, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
			return fmt.Errorf("evicted for a NoSchedule taint: %+v", c)
		}
		return nil
	})
}

// placedNode waits for a one-pod job's placement and returns its node.
func placedNode(t *testing.T, ns, job string) string {
	t.Helper()
	var node string
	eventually(t, job+" placed", func() error {
		var err error
		node, err = currentNode(t, ns, job)
		return err
	})
	return node
}

func currentNode(t *testing.T, ns, job string) (string, error) {
	wl := workloadOf(t, getJob(t, ns, job))
	if wl == nil || wl.Status.Admission == nil || wl.Status.Admission.PodSetAssignments[0].TopologyAssignment == nil {
		return "", fmt.Errorf("not placed")
	}
	nodes := wl.Status.Admission.PodSetAssignments[0].TopologyAssignment.Slices
	if len(nodes) != 1 {
		return "", fmt.Errorf("placed on %d slices", len(nodes))
	}
	v := nodes[0].ValuesPerLevel[0]
	if v.Universal == nil {
		return "", fmt.Errorf("not on one node")
	}
	return *v.Universal, nil
}

// waitEvictedFor waits for the job's Workload to be evicted for the
// node's failure, or requeued after it.
func waitEvictedFor(t *testing.T, ns, job, node string) {
	t.Helper()
	eventually(t, job+" evicted for the failure of "+node, func() error {
		wl := workloadOf(t, getJob(t, ns, job))
		c, r := condition(wl, kueue.WorkloadEvicted), condition(wl, kueue.WorkloadRequeued)
		switch {
		case r != nil && r.Reason == kueue.WorkloadEvictedByNodeFailures:
			return nil // already given back and queued again (unhealthyNodes cleared)
		case c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.WorkloadEvictedByNodeFailures:
			if len(wl.Status.UnhealthyNodes) != 1 || wl.Status.UnhealthyNodes[0].Name != node {
				return fmt.Errorf("unhealthyNodes %v, want %s", wl.Status.UnhealthyNodes, node)
			}
			return nil
		}
		return fmt.Errorf("Evicted %+v Requeued %+v", c, r)
	})
}

func taintNode(t *testing.T, name string, taint corev1.Taint) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		n.Spec.Taints = append(n.Spec.Taints, taint)
		return env.Client.Update(context.Background(), &n)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A job placed by topology whose node is deleted keeps running: the pods
// placed there get another node (the job recreates them, and the topology
// ungater sends them there), the others stay. When no node has room for
// them, the workload is evicted, saying so.
func TestJobOnAFailedNodeGetsAnotherNode(t *testing.T) {
	startManager(t)
	ns, _ := tasQueues(t, nil)
	j := newJob(ns, "kept", "lq", 3, "2")
	j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-preferred-topology": rackLabel}
	create(t, j)
	before := waitNodes(t, ns, "kept")
	failed := slices.Min(slices.Collect(maps.Keys(before)))
	if err := env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: failed}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pods of node "+failed+" placed elsewhere", func() error {
		after := waitNodes(t, ns, "kept")
		total := 0
		for n, c := range after {
			total += c
			if n == failed {
				return fmt.Errorf("still on %s: %v", failed, after)
			}
		}
		for n, c := range before {
			if n != failed && after[n] < c {
				return fmt.Errorf("pods that ran elsewhere moved: %v, then %v", before, after)
			}
		}
		if total != 3 {
			return fmt.Errorf("%d pods placed: %v", total, after)
		}
		return nil
	})
	if c := condition(workloadOf(t, getJob(t, ns, "kept")), kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		t.Fatalf("evicted: %+v", c)
	}
	complete(t, ns, "kept")

	// Three nodes of 4 cpus are left: three pods of 4 cpus fill them, and
	// a tainted node's pod has nowhere to go.
	full := newJob(ns, "full", "lq", 3, "4")
	full.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-preferred-topology": rackLabel}
	create(t, full)
	broken := slices.Min(slices.Collect(maps.Keys(waitNodes(t, ns, "full"))))
	taintNode(t, broken, corev1.Taint{Key: "example.com/broken", Effect: corev1.TaintEffectNoExecute})
	waitEvictedFor(t, ns, "full", broken)
	if c := condition(workloadOf(t, getJob(t, ns, "full")), kueue.WorkloadEvicted); c == nil || !strings.Contains(c.Message, "cannot be replaced") {
		t.Errorf("eviction %+v does not say why the pods were not moved", c)
	}
}

// waitNodes waits for a job's topology placement and returns its pods per
// node.
func waitNodes(t *testing.T, ns, job string) map[string]int {
	t.Helper()
	out := map[string]int{}
	eventually(t, job+" placed", func() error {
		wl := workloadOf(t, getJob(t, ns, job))
		if wl == nil || wl.Status.Admission == nil || wl.Status.Admission.PodSetAssignments[0].TopologyAssignment == nil {
			return fmt.Errorf("not placed")
		}
		domains, err := tas.Domains(wl.Status.Admission.PodSetAssignments[0].TopologyAssignment)
		if err != nil {
			return err
		}
		clear(out)
		for _, d := range domains {
			out[d.Values[len(d.Values)-1]] += int(d.Count)
		}
		return nil
	})
	return out
}

// A job asking for slices of 2 pods per rack whose node fails (tainted,
// or deleted) keeps running: its pods there move to the other node of the
// same rack, so that each rack still holds whole slices. A deleted node's
// rack is known from its last labels.
func TestSlicedJobOnAFailedNodeStaysInItsRack(t *testing.T) {
	for name, fail := range map[string]func(t *testing.T, node string){
		"tainted": func(t *testing.T, node string) {
			taintNode(t, node, corev1.Taint{Key: "example.com/broken", Effect: corev1.TaintEffectNoExecute})
		},
		"deleted": func(t *testing.T, node string) {
			if err := env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) { slicedJobStaysInItsRack(t, fail) })
	}
}

func slicedJobStaysInItsRack(t *testing.T, fail func(t *testing.T, node string)) {
	startManager(t)
	ns, hosts := tasQueues(t, nil)
	j := newJob(ns, "sliced", "lq", 4, "1")
	j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-slice-required-topology": rackLabel,
		"kueue.x-k8s.io/podset-slice-size": "2"}
	create(t, j)
	before := waitNodes(t, ns, "sliced")
	failed := slices.Min(slices.Collect(maps.Keys(before)))
	fail(t, failed)
	perRack := func(nodes map[string]int) map[string]int {
		out := map[string]int{}
		for n, c := range nodes {
			out[hosts[n]] += c
		}
		return out
	}
	eventually(t, "the pods of node "+failed+" moved within their rack", func() error {
		after := waitNodes(t, ns, "sliced")
		if after[failed] > 0 {
			return fmt.Errorf("still on %s: %v", failed, after)
		}
		if b, a := perRack(before), perRack(after); !maps.Equal(a, b) {
			return fmt.Errorf("pods per rack %v, then %v: want each rack to keep its slices", b, a)
		}
		return nil
	})
	if wl := workloadOf(t, getJob(t, ns, "sliced")); wl.Status.SchedulingStats != nil && len(wl.Status.SchedulingStats.Evictions) > 0 {
		t.Fatalf("evicted on the way: %+v", wl.Status.SchedulingStats.Evictions)
	}
}
