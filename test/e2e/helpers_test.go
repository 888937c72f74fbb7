package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// namespace creates a namespace for the test, deleted at cleanup.
func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-"}}
	if err := suite.client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), ns) })
	return ns.Name
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := suite.client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// queues creates, for the test, a flavor on the on-demand nodes, a
// ClusterQueue with cpu quota in it (preempting lower priorities) and a
// LocalQueue "lq".
func queues(t *testing.T, nominal string) (ns, cq string) {
	t.Helper()
	ns = namespace(t)
	cq, fl := ns+"-cq", ns+"-od"
	create(t,
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{NodeLabels: map[string]string{poolKey: onDemand}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption:        &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}},
	)
	t.Cleanup(func() {
		ctx := context.Background()
		_ = suite.client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}})
		_ = suite.client.Delete(ctx, &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}})
	})
	return ns, cq
}

// job builds a Job as a user writes it: not suspended. It runs
// completions pods, parallelism at a time, each requesting cpu.
func job(ns, name, queue string, parallelism, completions int32, cpu string) *batchv1.Job {
	labels := map[string]string{}
	if queue != "" {
		labels[jobframework.QueueNameLabel] = queue
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism), Completions: ptr.To(completions),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			}},
		},
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	testutil.Eventually(t, timeout, 100*time.Millisecond, what, cond)
}

func getJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	var j batchv1.Job
	if err := suite.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &j); err != nil {
		t.Fatal(err)
	}
	return &j
}

func workloadOf(t *testing.T, j *batchv1.Job) (*kueue.Workload, error) {
	t.Helper()
	var wl kueue.Workload
	key := client.ObjectKey{Namespace: j.Namespace, Name: jobframework.WorkloadName(j.Name, j.UID, batchjob.GVK)}
	err := suite.client.Get(context.Background(), key, &wl)
	return &wl, err
}

// waitComplete waits until the Job completed.
func waitComplete(t *testing.T, ns, name string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "job "+name+" complete", func() error {
		j := getJob(t, ns, name)
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("succeeded %d, active %d, suspended %v", j.Status.Succeeded, j.Status.Active, ptr.Deref(j.Spec.Suspend, false))
	})
}

// pods lists the pods of a Job.
func pods(t *testing.T, ns, jobName string) []corev1.Pod {
	t.Helper()
	var list corev1.PodList
	if err := suite.client.List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{batchv1.JobNameLabel: jobName}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// runningPods counts the Job's pods not yet finished.
func runningPods(t *testing.T, ns, jobName string) int {
	n := 0
	for _, p := range pods(t, ns, jobName) {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			n++
		}
	}
	return n
}

// reserving reads a ClusterQueue's reservingWorkloads.
func reserving(t *testing.T, cq string) int32 {
	t.Helper()
	var q kueue.ClusterQueue
	if err := suite.client.Get(context.Background(), client.ObjectKey{Name: cq}, &q); err != nil {
		t.Fatal(err)
	}
	return q.Status.ReservingWorkloads
}

func hasCondition(wl *kueue.Workload, typ string, status metav1.ConditionStatus) bool {
	c := meta.FindStatusCondition(wl.Status.Conditions, typ)
	return c != nil && c.Status == status
}
