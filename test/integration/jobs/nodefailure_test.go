package jobs

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A job placed by topology whose node is deleted is evicted (NodeFailures,
// the node in status.unhealthyNodes), queued again at once, and placed on
// the nodes left. One whose node gets an untolerated NoExecute taint is
// evicted the same way; one on a node tainted NoSchedule keeps running.
func TestJobsOnFailedNodesArePlacedAgain(t *testing.T) {
	startManager(t)
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
		case c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.WorkloadEvictedByNodeFailures:
			if len(wl.Status.UnhealthyNodes) != 1 || wl.Status.UnhealthyNodes[0].Name != node {
				return fmt.Errorf("unhealthyNodes %v, want %s", wl.Status.UnhealthyNodes, node)
			}
			return nil
		case r != nil && r.Reason == kueue.WorkloadEvictedByNodeFailures:
			return nil // already given back and queued again
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
