package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
)

// A Job placed by topology keeps running when one of its nodes fails (a
// NoExecute taint, with kube-controller-manager's taint eviction on kwok
// nodes): the pod there is evicted by Kubernetes, the Job controller makes
// a new one, and Kuota, having given the failed node's share of the
// assignment to another node, sends it there; the other pod runs on.
func TestTopologyJobKeepsRunningWhenANodeFails(t *testing.T) {

	applyExample(t, "tas/sample-queues.yaml")
	j := job("default", "tas-node-failure", "tas-user-queue", 2, 2, "5")
	j.Spec.Template.Annotations = map[string]string{
		"kueue.x-k8s.io/podset-preferred-topology": tasRackLabel,
		devcluster.RunForAnnotation:                "10m",
	}
	create(t, j)
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), j, client.PropagationPolicy("Background")) })
	var first map[types.UID]string
	eventually(t, 90*time.Second, "2 pods running", func() error {
		first = runningOn(t, "default", j.Name)
		if len(first) != 2 {
			return fmt.Errorf("%d pods running: %v", len(first), first)
		}
		return nil
	})
	var failed string
	var kept types.UID
	for uid, node := range first {
		if failed == "" {
			failed = node
		} else {
			kept = uid
		}
	}
	setNoExecute(t, failed, true)
	t.Cleanup(func() { setNoExecute(t, failed, false) })

	eventually(t, 2*time.Minute, "the lost pod running again on another node", func() error {
		now := runningOn(t, "default", j.Name)
		if len(now) != 2 {
			return fmt.Errorf("%d pods running: %v", len(now), now)
		}
		for _, node := range now {
			if node == failed {
				return fmt.Errorf("a pod still runs on %s: %v", failed, now)
			}
		}
		if _, ok := now[kept]; !ok {
			return fmt.Errorf("the pod on the healthy node was replaced too: %v, then %v", first, now)
		}
		return nil
	})
	wl, err := workloadOf(t, getJob(t, "default", j.Name))
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil {
		t.Fatalf("the Workload was evicted: %+v", c)
	}
	if ptr.Deref(getJob(t, "default", j.Name).Spec.Suspend, false) {
		t.Fatal("the Job was suspended")
	}
}

// runningOn maps the Job's running pods (not being deleted) to their nodes.
func runningOn(t *testing.T, ns, name string) map[types.UID]string {
	t.Helper()
	out := map[types.UID]string{}
	for _, p := range pods(t, ns, name) {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() {
			out[p.UID] = p.Spec.NodeName
		}
	}
	return out
}

// setNoExecute adds or removes the taint example.com/broken:NoExecute.
func setNoExecute(t *testing.T, node string, on bool) {
	t.Helper()
	taint := corev1.Taint{Key: "example.com/broken", Effect: corev1.TaintEffectNoExecute}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := suite.client.Get(context.Background(), client.ObjectKey{Name: node}, &n); err != nil {
			return err
		}
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == taint.Key })
		if on {
			n.Spec.Taints = append(n.Spec.Taints, taint)
		}
		return suite.client.Update(context.Background(), &n)
	})
	if err != nil {
		t.Errorf("tainting node %s: %v", node, err)
	}
}
