package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/integrations/pod"
	"github.com/kuota-dev/kuota/internal/integrations/statefulset"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// plainPod is a pod as a user writes it: restartPolicy Always, so it runs
// until deleted on the local cluster.
func plainPod(ns, name, queue, cpu string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{jobframework.QueueNameLabel: queue}},
		Spec:       podSpec(cpu),
	}
}

func podSpec(cpu string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}
}

func getPod(ns, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	err := suite.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &p)
	return &p, err
}

// runningOnDemand checks that a pod runs, ungated, on the flavor's nodes.
func runningOnDemand(p *corev1.Pod) error {
	if jobframework.IsGated(p) || p.Status.Phase != corev1.PodRunning {
		return fmt.Errorf("pod %s: gated %v, phase %s", p.Name, jobframework.IsGated(p), p.Status.Phase)
	}
	if p.Spec.NodeSelector[poolKey] != onDemand || !strings.HasPrefix(p.Spec.NodeName, onDemand) {
		return fmt.Errorf("pod %s on %s with node selector %v, want the on-demand flavor's nodes", p.Name, p.Spec.NodeName, p.Spec.NodeSelector)
	}
	return nil
}

func waitRunning(t *testing.T, ns string, names ...string) {
	t.Helper()
	eventually(t, 60*time.Second, "pods "+strings.Join(names, ",")+" run", func() error {
		for _, n := range names {
			p, err := getPod(ns, n)
			if err != nil {
				return err
			}
			if err := runningOnDemand(p); err != nil {
				return err
			}
		}
		return nil
	})
}

func waitReserving(t *testing.T, cq string, n int32) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("%d workloads reserve quota", n), func() error {
		if got := reserving(t, cq); got != n {
			return fmt.Errorf("%d reserve quota", got)
		}
		return nil
	})
}

// A plain pod is gated until its Workload is admitted, runs on the
// flavor's nodes, is preempted (deleted) by a higher priority, and gives
// its quota back when deleted.
func TestPlainPodsQueueLikeJobs(t *testing.T) {
	ctx := context.Background()
	ns, cq := queues(t, "2")
	high := ns + "-high"
	create(t, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: high}, Value: 1000})
	t.Cleanup(func() {
		_ = suite.client.Delete(ctx, &kueue.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: high}})
	})

	first := plainPod(ns, "first", "lq", "2")
	create(t, first)
	if !jobframework.IsGated(first) || first.Labels[jobframework.ManagedLabel] != "true" || !slices.Contains(first.Finalizers, jobframework.PodFinalizer) {
		t.Fatalf("the webhook must gate, label and hold a pod with a queue name: gates %v labels %v finalizers %v",
			first.Spec.SchedulingGates, first.Labels, first.Finalizers)
	}
	waitRunning(t, ns, "first")
	waiting := plainPod(ns, "waiting", "lq", "1")
	create(t, waiting)
	wlName := jobframework.WorkloadName("waiting", waiting.UID, pod.GVK)
	eventually(t, 30*time.Second, "the second pod waits for quota", func() error {
		var wl kueue.Workload
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: wlName}, &wl); err != nil {
			return err
		}
		if !hasCondition(&wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	if p, _ := getPod(ns, "waiting"); !jobframework.IsGated(p) || p.Spec.NodeName != "" {
		t.Fatal("a pod waiting for quota must stay gated and unscheduled")
	}
	// Its queue name may change while it waits, but not the running pod's.
	if p, err := getPod(ns, "first"); err == nil {
		p.Labels[jobframework.QueueNameLabel] = "other"
		if err := suite.client.Update(ctx, p); err == nil || !strings.Contains(err.Error(), jobframework.QueueNameLabel) {
			t.Errorf("changing the queue name of a running pod: %v, want a refusal naming the label", err)
		}
	}

	urgent := plainPod(ns, "urgent", "lq", "2")
	urgent.Labels[jobframework.PriorityClassLabel] = high
	create(t, urgent)
	eventually(t, 60*time.Second, "the low-priority pod is preempted: deleted", func() error {
		if _, err := getPod(ns, "first"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("first still there (%v)", err)
		}
		return nil
	})
	waitRunning(t, ns, "urgent")
	if err := suite.client.Delete(ctx, urgent); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, ns, "waiting")
	if err := suite.client.Delete(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	waitReserving(t, cq, 0)
}

// groupPod is a member of a pod group of total pods that succeed runFor
// after they start.
func groupPod(ns, group string, i, total int, runFor string) *corev1.Pod {
	p := plainPod(ns, fmt.Sprintf("%s-%d", group, i), "lq", "1")
	p.Labels[jobframework.PodGroupNameLabel] = group
	p.Annotations = map[string]string{jobframework.PodGroupTotalCountAnnotation: fmt.Sprint(total), devcluster.RunForAnnotation: runFor}
	return p
}

// A group of 4 that does not fit stays gated whole (no pod runs); once
// the quota grows it is admitted at once, runs, finishes and returns its
// quota. A pod that disagrees with the group is refused.
func TestPodGroupIsAdmittedWhole(t *testing.T) {
	ctx := context.Background()
	ns, cq := queues(t, "3")
	for i := range 4 {
		create(t, groupPod(ns, "gang", i, 4, "3s"))
	}
	bad := groupPod(ns, "gang", 9, 3, "3s")
	if err := suite.client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), jobframework.PodGroupTotalCountAnnotation) {
		t.Fatalf("a pod whose total count disagrees with its group: %v, want a refusal naming the annotation", err)
	}
	eventually(t, 30*time.Second, "the group's Workload waits", func() error {
		var wl kueue.Workload
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gang"}, &wl); err != nil {
			return err
		}
		if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 4 || !hasCondition(&wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse) {
			return fmt.Errorf("podSets %v conditions %v", wl.Spec.PodSets, wl.Status.Conditions)
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	for i := range 4 {
		if p, err := getPod(ns, fmt.Sprintf("gang-%d", i)); err != nil || !jobframework.IsGated(p) {
			t.Fatalf("pod %d of a group that does not fit must stay gated (%v)", i, err)
		}
	}
	var q kueue.ClusterQueue
	if err := suite.client.Get(ctx, client.ObjectKey{Name: cq}, &q); err != nil {
		t.Fatal(err)
	}
	q.Spec.ResourceGroups[0].Flavors[0].Resources[0].NominalQuota = resource.MustParse("4")
	if err := suite.client.Update(ctx, &q); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the group finishes", func() error {
		var wl kueue.Workload
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gang"}, &wl); err != nil {
			return err
		}
		if !hasCondition(&wl, kueue.WorkloadFinished, metav1.ConditionTrue) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	for i := range 4 {
		p, err := getPod(ns, fmt.Sprintf("gang-%d", i))
		if err != nil || p.Status.Phase != corev1.PodSucceeded || !strings.HasPrefix(p.Spec.NodeName, onDemand) {
			t.Fatalf("pod %d: %v, want it succeeded on the flavor's nodes", i, err)
		}
	}
	waitReserving(t, cq, 0)
}

func managedPods(t *testing.T, ns string, sel map[string]string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels(sel)); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// A Deployment's pods are queued one by one: those beyond the quota wait
// gated; a scale-down gives quota back; deleting it returns the rest.
func TestDeploymentPodsQueue(t *testing.T) {
	ctx := context.Background()
	ns, cq := queues(t, "2")
	sel := map[string]string{"app": "serve"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "serve", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec("1")}},
	}
	create(t, d)
	eventually(t, 60*time.Second, "two pods run, the third waits gated", func() error {
		var run, gated int
		for _, p := range managedPods(t, ns, sel) {
			switch {
			case runningOnDemand(&p) == nil:
				run++
			case jobframework.IsGated(&p):
				gated++
			}
		}
		if run != 2 || gated != 1 {
			return fmt.Errorf("%d running, %d gated", run, gated)
		}
		return nil
	})
	waitReserving(t, cq, 2)
	eventually(t, 10*time.Second, "scaled down to 1", func() error {
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To[int32](1)
		return suite.client.Update(ctx, d)
	})
	waitReserving(t, cq, 1)
	if err := suite.client.Delete(ctx, d, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	waitReserving(t, cq, 0)
}

// A StatefulSet's replicas are one group, admitted together; a scale-down
// gives back the quota of the pods it no longer has; deleting it returns
// the rest.
func TestStatefulSetIsOneGroup(t *testing.T) {
	ctx := context.Background()
	ns, cq := queues(t, "3")
	sel := map[string]string{"app": "db"}
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: sel},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec("1")}},
	}
	create(t, s)
	group := statefulset.GroupName("db")
	waitRunning(t, ns, "db-0", "db-1", "db-2")
	var wl kueue.Workload
	if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, &wl); err != nil {
		t.Fatalf("the StatefulSet's group Workload %s: %v", group, err)
	}
	if len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 3 {
		t.Fatalf("podSets %v, want one of 3", wl.Spec.PodSets)
	}
	eventually(t, 10*time.Second, "scaled down to 2", func() error {
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		s.Spec.Replicas = ptr.To[int32](2)
		return suite.client.Update(ctx, s)
	})
	eventually(t, 60*time.Second, "the scale-down gives a pod's quota back", func() error {
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: group}, &wl); err != nil {
			return err
		}
		if len(wl.Status.ReclaimablePods) != 1 || wl.Status.ReclaimablePods[0].Count != 1 {
			return fmt.Errorf("reclaimablePods %v", wl.Status.ReclaimablePods)
		}
		return nil
	})
	if err := suite.client.Delete(ctx, s, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		t.Fatal(err)
	}
	waitReserving(t, cq, 0)
}
