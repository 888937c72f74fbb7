package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// restartHold stands in for a long termination grace period: a pod
// carrying it stays, terminating on its node, until the test removes it.
const restartHold = "test.kuota.dev/hold"

// deletedKind is one job kind of the deletion test: what to create (its
// pods carry restartHold and run until deleted), how many pods and
// Workloads it makes, and how a user deletes it.
type deletedKind struct {
	name      string
	objs      []client.Object
	pods, wls int
	delete    func(ctx context.Context) error
}

// A job of every kind the suite runs (batch Job, JobSet when its
// controller runs, pod group, Deployment, StatefulSet) is deleted while
// its pods terminate, and the manager is SIGKILLed and restarted in the
// middle: the Workloads still hold their quota (ClusterQueue status, the
// resource-in-use finalizer) while the pods remain; once the pods go the
// quota returns within 10 s.
func TestManagerKillDuringDeletionKeepsQuota(t *testing.T) {
	logOnFailure(t)
	ctx := context.Background()
	ns, cq := queues(t, "10")
	t.Cleanup(func() { releaseHeldPods(t, ns) })
	kinds := deletedKinds(ns)
	var pods, wls int
	for _, k := range kinds {
		create(t, k.objs...)
		pods, wls = pods+k.pods, wls+k.wls
	}
	start := time.Now()
	eventually(t, 60*time.Second, "every job admitted, its pods running and held", func() error {
		return heldAndRunning(ns, pods, wls)
	})
	t.Logf("%d jobs admitted, %d pods running in %s", len(kinds), pods, time.Since(start).Round(time.Millisecond))
	held := workloadsIn(t, ns)
	before := usageFigures{reserving: int32(wls), cpu: int64(pods) * 1000}
	// The status reporter publishes shortly after the admissions.
	eventually(t, 10*time.Second, "the ClusterQueue status shows the reservations", func() error {
		if got := reservation(t, cq); got != before {
			return fmt.Errorf("the ClusterQueue reserves %+v, want %+v", got, before)
		}
		return nil
	})

	for _, k := range kinds {
		if err := k.delete(ctx); err != nil {
			t.Fatalf("deleting the %s: %v", k.name, err)
		}
	}
	start = time.Now()
	eventually(t, 60*time.Second, "every pod is being deleted", func() error { return allDeleting(ns, pods) })
	t.Logf("every pod was being deleted %s after the deletions", time.Since(start).Round(time.Millisecond))
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := suite.restartManager(rctx); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if got := reservation(t, cq); got != before {
			t.Fatalf("after the restart, with the pods still terminating, the ClusterQueue reserves %+v, want %+v", got, before)
		}
		for _, name := range held {
			var wl kueue.Workload
			if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil ||
				!slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) ||
				!hasCondition(&wl, kueue.WorkloadQuotaReserved, metav1.ConditionTrue) {
				t.Fatalf("Workload %s (%v) must keep its quota and finalizer while its pods terminate: finalizers %v, conditions %v",
					name, err, wl.Finalizers, wl.Status.Conditions)
			}
		}
	}

	// No grace: the Workloads of the jobs just deleted are checked, and
	// their pods, terminating on their nodes, still use the quota.
	podAudit(t, ns, "while the deleted jobs' pods terminate", time.Millisecond)

	released := time.Now()
	releaseHeldPods(t, ns)
	eventually(t, 10*time.Second, "the quota returns once the pods are gone", func() error {
		if got := reservation(t, cq); got != (usageFigures{}) {
			return fmt.Errorf("the ClusterQueue still reserves %+v", got)
		}
		return zeroUsage(cq)
	})
	t.Logf("the quota returned %s after the pods were released", time.Since(released).Round(time.Millisecond))
	eventually(t, 30*time.Second, "no Workload keeps its finalizer", func() error {
		var list kueue.WorkloadList
		if err := suite.client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, wl := range list.Items {
			if slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) {
				return fmt.Errorf("Workload %s keeps %s", wl.Name, kueue.ResourceInUseFinalizerName)
			}
		}
		return nil
	})
	cleanAudit(t, ns)
}

// deletedKinds builds one job of each kind, 1 cpu per pod.
func deletedKinds(ns string) []deletedKind {
	c := suite.client
	background := client.PropagationPolicy(metav1.DeletePropagationBackground)
	template := func(restart corev1.RestartPolicy) corev1.PodTemplateSpec {
		spec := podSpec("1")
		spec.RestartPolicy = restart
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "held"}, Finalizers: []string{restartHold},
			Annotations: map[string]string{devcluster.RunForAnnotation: "10m"}}, Spec: spec}
	}
	j := job(ns, "held-job", "lq", 2, 2, "1")
	j.Spec.Template = template(corev1.RestartPolicyNever)
	kinds := []deletedKind{{name: "batch Job", objs: []client.Object{j}, pods: 2, wls: 1,
		delete: func(ctx context.Context) error { return c.Delete(ctx, j, background) }}}
	if suite.jobSet.skip == "" {
		js := &jobsetapi.JobSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held-set", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
			Spec: jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "w", Replicas: 2, Template: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1), Template: template(corev1.RestartPolicyNever)}}}}},
		}
		kinds = append(kinds, deletedKind{name: "JobSet", objs: []client.Object{js}, pods: 2, wls: 1,
			delete: func(ctx context.Context) error { return c.Delete(ctx, js, background) }})
	}
	var group []client.Object
	for i := range 2 {
		p := groupPod(ns, "held-group", i, 2, "10m")
		p.Finalizers = []string{restartHold}
		group = append(group, p)
	}
	kinds = append(kinds, deletedKind{name: "pod group", objs: group, pods: 2, wls: 1, delete: func(ctx context.Context) error {
		for _, p := range group {
			if err := c.Delete(ctx, p); err != nil {
				return err
			}
		}
		return nil
	}})
	queued := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{jobframework.QueueNameLabel: "lq"}}
	}
	d := &appsv1.Deployment{ObjectMeta: queued("held-deploy"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "held", "kind": "deploy"}},
		Template: template(corev1.RestartPolicyAlways)}}
	d.Spec.Template.Labels["kind"] = "deploy"
	s := &appsv1.StatefulSet{ObjectMeta: queued("held-sts"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2),
		PodManagementPolicy: appsv1.ParallelPodManagement,
		Selector:            &metav1.LabelSelector{MatchLabels: map[string]string{"app": "held", "kind": "sts"}},
		Template:            template(corev1.RestartPolicyAlways)}}
	s.Spec.Template.Labels["kind"] = "sts"
	return append(kinds,
		deletedKind{name: "Deployment", objs: []client.Object{d}, pods: 1, wls: 1,
			delete: func(ctx context.Context) error { return c.Delete(ctx, d, background) }},
		deletedKind{name: "StatefulSet", objs: []client.Object{s}, pods: 2, wls: 1,
			delete: func(ctx context.Context) error { return c.Delete(ctx, s, background) }})
}

func nsPods(ns string) ([]corev1.Pod, error) {
	var list corev1.PodList
	err := suite.client.List(context.Background(), &list, client.InNamespace(ns))
	return list.Items, err
}

// heldAndRunning checks that the namespace has pods pods running on
// nodes, each held by restartHold, and wls admitted Workloads.
func heldAndRunning(ns string, pods, wls int) error {
	list, err := nsPods(ns)
	if err != nil {
		return err
	}
	running := 0
	for _, p := range list {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" && slices.Contains(p.Finalizers, restartHold) {
			running++
		}
	}
	var wlList kueue.WorkloadList
	if err := suite.client.List(context.Background(), &wlList, client.InNamespace(ns)); err != nil {
		return err
	}
	admitted := 0
	for _, wl := range wlList.Items {
		if hasCondition(&wl, kueue.WorkloadAdmitted, metav1.ConditionTrue) {
			admitted++
		}
	}
	if running != pods || len(list) != pods || admitted != wls {
		return fmt.Errorf("%d pods, %d running and held (want %d); %d Workloads admitted (want %d)", len(list), running, pods, admitted, wls)
	}
	return nil
}

func allDeleting(ns string, pods int) error {
	list, err := nsPods(ns)
	if err != nil {
		return err
	}
	deleting := 0
	for _, p := range list {
		if !p.DeletionTimestamp.IsZero() && p.Status.Phase == corev1.PodRunning {
			deleting++
		}
	}
	if deleting != pods || len(list) != pods {
		return fmt.Errorf("%d pods, %d running and being deleted (want %d)", len(list), deleting, pods)
	}
	return nil
}

func workloadsIn(t *testing.T, ns string) []string {
	t.Helper()
	var list kueue.WorkloadList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, wl := range list.Items {
		out = append(out, wl.Name)
	}
	return out
}

// usageFigures is what a ClusterQueue's status says it reserves.
type usageFigures struct {
	reserving int32
	cpu       int64 // millicpu
}

func reservation(t *testing.T, cq string) usageFigures {
	t.Helper()
	var q kueue.ClusterQueue
	if err := suite.client.Get(context.Background(), client.ObjectKey{Name: cq}, &q); err != nil {
		t.Fatal(err)
	}
	out := usageFigures{reserving: q.Status.ReservingWorkloads}
	for _, fu := range q.Status.FlavorsReservation {
		for _, r := range fu.Resources {
			if r.Name == corev1.ResourceCPU {
				out.cpu += r.Total.MilliValue()
			}
		}
	}
	return out
}

// releaseHeldPods removes restartHold from every pod of the namespace
// that still has it.
func releaseHeldPods(t *testing.T, ns string) {
	t.Helper()
	eventually(t, 20*time.Second, "the held pods released", func() error {
		list, err := nsPods(ns)
		if err != nil {
			return err
		}
		for i := range list {
			p := &list[i]
			if !slices.Contains(p.Finalizers, restartHold) {
				continue
			}
			patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
			p.Finalizers = slices.DeleteFunc(p.Finalizers, func(f string) bool { return f == restartHold })
			if err := suite.client.Patch(context.Background(), p, patch); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		return nil
	})
}
