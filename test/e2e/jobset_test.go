package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A queued JobSet, run by JobSet's real controller: suspended on creation,
// admitted, its child Jobs' pods run on the flavor's kwok nodes and carry
// the Workload's name, the JobSet completes, and the quota returns.
func TestJobSetRunsOnItsFlavorAndReturnsQuota(t *testing.T) {
	if suite.jobSet.skip != "" {
		t.Skip("JobSet controller not available: " + suite.jobSet.skip)
	}
	ctx := context.Background()
	ns, cq := queues(t, "4")
	rj := func(name string, replicas, pods int32) jobsetapi.ReplicatedJob {
		return jobsetapi.ReplicatedJob{Name: name, Replicas: replicas, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods), Completions: ptr.To(pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			}}}}}
	}
	js := &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "train", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec:       jobsetapi.JobSetSpec{ReplicatedJobs: []jobsetapi.ReplicatedJob{rj("driver", 1, 1), rj("workers", 2, 1)}},
	}
	create(t, js)
	if !ptr.Deref(js.Spec.Suspend, false) {
		t.Fatal("the webhook must create a queued JobSet suspended")
	}
	if js.Spec.Network == nil {
		t.Fatal("JobSet's own webhook did not default the JobSet")
	}
	wlName := jobframework.WorkloadName(js.Name, js.UID, jobset.GVK)
	eventually(t, 90*time.Second, "the JobSet completed", func() error {
		var got jobsetapi.JobSet
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(js), &got); err != nil {
			return err
		}
		if meta.IsStatusConditionTrue(got.Status.Conditions, string(jobsetapi.JobSetCompleted)) {
			return nil
		}
		return fmt.Errorf("suspended %v, status %+v", ptr.Deref(got.Spec.Suspend, false), got.Status.ReplicatedJobsStatus)
	})

	var list corev1.PodList
	if err := suite.client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{jobsetapi.JobSetNameKey: js.Name}); err != nil {
		t.Fatal(err)
	}
	perPodSet := map[string]int{}
	for _, p := range list.Items {
		if p.Spec.NodeSelector[poolKey] != onDemand || !strings.HasPrefix(p.Spec.NodeName, onDemand) {
			t.Errorf("pod %s: node selector %v, node %s; want the on-demand flavor's nodes", p.Name, p.Spec.NodeSelector, p.Spec.NodeName)
		}
		if p.Annotations[jobframework.WorkloadAnnotation] != wlName {
			t.Errorf("pod %s: workload annotation %q, want %s (from the admitted template)", p.Name, p.Annotations[jobframework.WorkloadAnnotation], wlName)
		}
		perPodSet[p.Labels[jobframework.PodSetLabel]]++
	}
	if perPodSet["driver"] < 1 || perPodSet["workers"] < 2 {
		t.Errorf("pods per PodSet %v, want at least driver 1 and workers 2", perPodSet)
	}

	eventually(t, 30*time.Second, "the Workload finished and the quota returned", func() error {
		var wl kueue.Workload
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: wlName}, &wl); err != nil {
			return err
		}
		if !hasCondition(&wl, kueue.WorkloadFinished, metav1.ConditionTrue) {
			return fmt.Errorf("Workload conditions %v", wl.Status.Conditions)
		}
		if n := reserving(t, cq); n != 0 {
			return fmt.Errorf("%d workloads still reserve quota", n)
		}
		return nil
	})
}
