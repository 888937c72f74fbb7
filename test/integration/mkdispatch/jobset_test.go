package mkdispatch

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// A JobSet handed to MultiKueue runs in the worker that reserves quota,
// and completes in the manager when it completes there.
func TestJobSetRunsInAWorker(t *testing.T) {
	ns := setup(t)
	startManager(t, manager)
	startManager(t, worker1)
	js := &jobsetapi.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainer", Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: jobsetapi.JobSetSpec{Suspend: ptr.To(true), ManagedBy: ptr.To(jobframework.MultiKueueManagedBy),
			ReplicatedJobs: []jobsetapi.ReplicatedJob{{Name: "workers", Replicas: 2, Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "c", Image: "busybox",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
			}}}}},
	}
	create(t, manager, js)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(js.Name, js.UID, jobset.GVK)}
	eventually(t, "the JobSet runs in worker1", func() error {
		var remote jobsetapi.JobSet
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(js), &remote); err != nil {
			return err
		}
		if remote.Labels[jobframework.PrebuiltWorkloadLabel] != wlKey.Name || remote.Spec.ManagedBy != nil || ptr.Deref(remote.Spec.Suspend, true) {
			return fmt.Errorf("labels %v managedBy %v suspend %v", remote.Labels, remote.Spec.ManagedBy, remote.Spec.Suspend)
		}
		return nil
	})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var remote jobsetapi.JobSet
		if err := worker1.Client.Get(context.Background(), client.ObjectKeyFromObject(js), &remote); err != nil {
			return err
		}
		meta.SetStatusCondition(&remote.Status.Conditions, metav1.Condition{Type: string(jobsetapi.JobSetCompleted),
			Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully"})
		remote.Status.TerminalState = string(jobsetapi.JobSetCompleted)
		return worker1.Client.Status().Update(context.Background(), &remote)
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the manager's JobSet and workload complete", func() error {
		var local jobsetapi.JobSet
		get(t, manager, client.ObjectKeyFromObject(js), &local)
		if !meta.IsStatusConditionTrue(local.Status.Conditions, string(jobsetapi.JobSetCompleted)) {
			return fmt.Errorf("conditions %v", local.Status.Conditions)
		}
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) || ptr.Deref(wl.Status.ClusterName, "") != ns+"-worker1" {
			return fmt.Errorf("clusterName %v conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
		}
		return nil
	})
}
