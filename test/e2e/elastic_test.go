package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// Kueue's elastic Job example (jobs/sample-scalable-job.yaml) scales while
// it runs, with the real Job controller: from 3 to 5 pods the added two
// start once a new Workload slice is admitted and the first three keep
// running; at 20 pods (2 cpus, over the 1 cpu quota) the slice waits and
// the added pods stay held by the elastic gate; back at 2 pods the waiting
// slice goes and the quota held drops to the 2 pods'.
func TestKueueElasticJobExampleScales(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	cq, fl := ns+"-cq", ns+"-od"
	create(t,
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{poolKey: onDemand}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl), Resources: []kueue.ResourceQuota{
					{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("1")},
					{Name: corev1.ResourceMemory, NominalQuota: resource.MustParse("10Gi")}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-queue"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}},
	)
	t.Cleanup(func() {
		_ = suite.client.Delete(context.Background(), &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}})
		_ = suite.client.Delete(context.Background(), &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}})
	})
	objs := readExample(t, "jobs/sample-scalable-job.yaml")
	var j batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &j); err != nil {
		t.Fatal(err)
	}
	j.Namespace = ns
	j.Spec.Template.Annotations = map[string]string{devcluster.RunForAnnotation: "10m"} // the pods keep running
	create(t, &j)
	if !slices.ContainsFunc(j.Spec.Template.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.ElasticJobSchedulingGate }) {
		t.Fatalf("the webhook did not gate the elastic Job's pods: %v", j.Spec.Template.Spec.SchedulingGates)
	}
	name := j.Name
	waitPods(t, ns, name, 3, 0)
	first := runningPodUIDs(t, ns, name)

	scaleJob(t, ns, name, 5)
	waitPods(t, ns, name, 5, 0)
	if still := runningPodUIDs(t, ns, name); !containsAll(still, first) {
		t.Fatalf("the first pods did not keep running while the Job grew: %v, then %v", first, still)
	}
	if ptr.Deref(getJob(t, ns, name).Spec.Suspend, false) {
		t.Fatal("the Job was suspended while it grew")
	}
	if s := elasticSlices(t, ns, getJob(t, ns, name).UID); len(s.finished) != 1 || s.finished[0] != kueue.WorkloadSliceReplaced || len(s.admitted) != 1 {
		t.Fatalf("slices %+v: want the first finished as replaced and one admitted", s)
	}

	scaleJob(t, ns, name, 20)
	eventually(t, 60*time.Second, "a slice of 20 pods waiting", func() error {
		s := elasticSlices(t, ns, getJob(t, ns, name).UID)
		if len(s.pending) != 1 || len(s.admitted) != 1 {
			return fmt.Errorf("slices %+v", s)
		}
		return nil
	})
	waitPods(t, ns, name, 5, 15)

	scaleJob(t, ns, name, 2)
	eventually(t, 60*time.Second, "the waiting slice gone and the quota of 2 pods held", func() error {
		s := elasticSlices(t, ns, getJob(t, ns, name).UID)
		if len(s.pending) != 0 || len(s.admitted) != 1 {
			return fmt.Errorf("slices %+v", s)
		}
		var q kueue.ClusterQueue
		if err := suite.client.Get(ctx, client.ObjectKey{Name: cq}, &q); err != nil {
			return err
		}
		for _, f := range q.Status.FlavorsReservation {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU && r.Total.Cmp(resource.MustParse("200m")) != 0 {
					return fmt.Errorf("%s cpu reserved", r.Total.String())
				}
			}
		}
		return nil
	})
	waitPods(t, ns, name, 2, 0)
	if err := suite.client.Delete(ctx, getJob(t, ns, name), client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
}

func scaleJob(t *testing.T, ns, name string, n int32) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("parallelism set to %d", n), func() error {
		j := getJob(t, ns, name)
		j.Spec.Parallelism = ptr.To(n)
		return suite.client.Update(context.Background(), j)
	})
}

// waitPods waits for running pods of the Job, and held ones (pending with
// the elastic gate), not counting pods being deleted.
func waitPods(t *testing.T, ns, name string, running, held int) {
	t.Helper()
	eventually(t, 90*time.Second, fmt.Sprintf("%d pods running and %d held", running, held), func() error {
		gotRunning, gotHeld := 0, 0
		for _, p := range pods(t, ns, name) {
			switch {
			case !p.DeletionTimestamp.IsZero():
			case slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueue.ElasticJobSchedulingGate }):
				gotHeld++
			case p.Status.Phase == corev1.PodRunning:
				gotRunning++
			}
		}
		if gotRunning != running || gotHeld != held {
			return fmt.Errorf("%d running, %d held", gotRunning, gotHeld)
		}
		return nil
	})
}

func runningPodUIDs(t *testing.T, ns, name string) []types.UID {
	var out []types.UID
	for _, p := range pods(t, ns, name) {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp.IsZero() {
			out = append(out, p.UID)
		}
	}
	return out
}

func containsAll(have, want []types.UID) bool {
	for _, u := range want {
		if !slices.Contains(have, u) {
			return false
		}
	}
	return true
}

// sliceStates sorts a Job's Workloads: the reasons of the finished ones,
// and the names of the admitted and the waiting ones.
type sliceStates struct {
	finished, admitted, pending []string
}

func elasticSlices(t *testing.T, ns string, uid types.UID) sliceStates {
	t.Helper()
	var list kueue.WorkloadList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{jobframework.JobUIDLabel: string(uid)}); err != nil {
		t.Fatal(err)
	}
	var s sliceStates
	for i := range list.Items {
		wl := &list.Items[i]
		switch {
		case hasCondition(wl, kueue.WorkloadFinished, metav1.ConditionTrue):
			s.finished = append(s.finished, meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished).Reason)
		case hasCondition(wl, kueue.WorkloadAdmitted, metav1.ConditionTrue):
			s.admitted = append(s.admitted, wl.Name)
		default:
			s.pending = append(s.pending, wl.Name)
		}
	}
	return s
}
