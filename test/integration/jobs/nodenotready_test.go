package jobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller/topologyungater"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A node that stops being ready does not fail while the job's pods there
// run (it may come back); once they have failed it does, at once, without
// waiting for the node controller's taints: its pods get another node, and
// a pod sent to it meanwhile, which can never start there, is failed with
// TerminatedByKueue so that the job makes a new one. The pods here stand
// in for the Job controller's and the kubelet's (there is neither).
func TestJobOnANodeNotReadyGetsAnotherNodeOnceItsPodsEnd(t *testing.T) {
	startManager(t)
	ns, _ := tasQueues(t, nil)
	j := newJob(ns, "nr", "lq", 3, "2")
	j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-preferred-topology": rackLabel}
	create(t, j)
	before := waitNodes(t, ns, "nr")
	wl := workloadOf(t, getJob(t, ns, "nr"))
	podOn := func(name, node string, bound bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels:      map[string]string{jobframework.TASLabel: jobframework.TASLabelValue, jobframework.PodSetLabel: "main"},
			Annotations: map[string]string{jobframework.WorkloadAnnotation: wl.Name}},
			Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: node},
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if bound {
			p.Spec.NodeName = node
		}
		create(t, p)
		if bound {
			setPodPhase(t, p, corev1.PodRunning)
		}
		return p
	}
	var onFailed []*corev1.Pod
	failed := slices.Min(slices.Collect(maps.Keys(before)))
	for _, node := range slices.Sorted(maps.Keys(before)) {
		for i := range before[node] {
			p := podOn(fmt.Sprintf("%s-%d", node, i), node, true)
			if node == failed {
				onFailed = append(onFailed, p)
			}
		}
	}

	setNodeReady(t, failed, false)
	time.Sleep(2 * time.Second)
	if after := waitNodes(t, ns, "nr"); after[failed] != before[failed] {
		t.Fatalf("the pods on %s were moved while they still ran: %v, then %v", failed, before, after)
	}
	// The job's pod there fails (say the node shut down); a new one is
	// sent to the same node before Kuota moves its share.
	for _, p := range onFailed {
		setPodPhase(t, p, corev1.PodFailed)
	}
	late := podOn("late", failed, false)
	eventually(t, "the pods of node "+failed+" placed elsewhere", func() error {
		after := waitNodes(t, ns, "nr")
		if after[failed] > 0 {
			return fmt.Errorf("still on %s: %v", failed, after)
		}
		total := 0
		for _, c := range after {
			total += c
		}
		if total != 3 {
			return fmt.Errorf("%d pods placed: %v", total, after)
		}
		return nil
	})
	if c := condition(workloadOf(t, getJob(t, ns, "nr")), kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
		t.Fatalf("evicted: %+v", c)
	}
	eventually(t, "the pod sent to "+failed+" failed by Kuota", func() error {
		var p corev1.Pod
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(late), &p); err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == topologyungater.ConditionTerminatedByKueue && p.Status.Phase == corev1.PodFailed {
				return nil
			}
		}
		return fmt.Errorf("phase %s, conditions %+v", p.Status.Phase, p.Status.Conditions)
	})
}

func setPodPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		p.Status.Phase = phase
		return env.Client.Status().Update(context.Background(), p)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// setNodeReady sets a node's Ready condition.
func setNodeReady(t *testing.T, name string, ready bool) {
	t.Helper()
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status = status
			}
		}
		return env.Client.Status().Update(context.Background(), &n)
	})
	if err != nil {
		t.Fatal(err)
	}
}
