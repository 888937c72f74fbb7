package mkdispatch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// A workload evicted in its worker (here: the worker's ClusterQueue is
// stopped and drained) gives its quota back in the manager too, so that
// Admitted in the manager means running in a worker, and is dispatched
// again: the other worker gets it and runs its job.
func TestWorkerEvictionIsDispatchedAgain(t *testing.T) {
	ns := setup(t)
	startManager(t, manager)
	startManager(t, worker1)
	job := newJob(ns, "sim", 1, "1")
	create(t, manager, job)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	dumpOnFailure(t, wlKey)
	waitRunning(t, worker1, client.ObjectKeyFromObject(job))

	stopQueue(t, worker1, ns+"-cq")
	eventually(t, "the manager gives the quota back and says why", func() error {
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if ptr.Deref(wl.Status.ClusterName, "") == ns+"-worker1" {
			return fmt.Errorf("still placed on worker1: %v", wl.Status.Conditions)
		}
		// Evicted=True, or False again once quota is reserved anew,
		// saying what it was. Once: a second retry (say, for a copy
		// deleted on a stale read) would overwrite the worker's reason.
		c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
		if c == nil || !strings.Contains(c.Message, `evicted in worker cluster "`+ns+`-worker1": ClusterQueueStopped`) {
			return fmt.Errorf("Evicted %+v", c)
		}
		return nil
	})

	startManager(t, worker2)
	waitRunning(t, worker2, client.ObjectKeyFromObject(job))
	eventually(t, "the manager's workload is admitted on worker2, and worker1 holds nothing of it", func() error {
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if ptr.Deref(wl.Status.ClusterName, "") != ns+"-worker2" || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("clusterName %v conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
		}
		var rw kueue.Workload
		if err := worker1.Client.Get(context.Background(), wlKey, &rw); err == nil && rw.DeletionTimestamp.IsZero() &&
			meta.IsStatusConditionTrue(rw.Status.Conditions, kueue.WorkloadQuotaReserved) {
			return fmt.Errorf("worker1's copy holds quota")
		}
		return nil
	})
}

// waitRunning waits for the job's copy in a worker to be started.
func waitRunning(t *testing.T, e *framework.Env, key client.ObjectKey) {
	t.Helper()
	eventually(t, "the job runs in the worker", func() error {
		var rj batchv1.Job
		if err := e.Client.Get(context.Background(), key, &rj); err != nil {
			return err
		}
		if !rj.DeletionTimestamp.IsZero() || ptr.Deref(rj.Spec.Suspend, true) {
			return fmt.Errorf("suspended or being deleted")
		}
		return nil
	})
}

// stopQueue stops a cluster's ClusterQueue and evicts what it admitted.
func stopQueue(t *testing.T, e *framework.Env, name string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var cq kueue.ClusterQueue
		if err := e.Client.Get(context.Background(), client.ObjectKey{Name: name}, &cq); err != nil {
			return err
		}
		cq.Spec.StopPolicy = ptr.To(kueue.HoldAndDrain)
		return e.Client.Update(context.Background(), &cq)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A workload running on a worker whose MultiKueueCluster is deleted is
// given workerLostTimeout, as for a worker that stopped answering, then
// dispatched again.
func TestWorkloadOfADeletedClusterIsDispatchedAgain(t *testing.T) {
	ns := setup(t)
	startManager(t, manager, func(c *configapi.Configuration) {
		c.MultiKueue = &configapi.MultiKueue{WorkerLostTimeout: &metav1.Duration{Duration: 3 * time.Second}}
	})
	startManager(t, worker1)
	job := newJob(ns, "render", 1, "1")
	create(t, manager, job)
	wlKey := client.ObjectKey{Namespace: ns, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	waitRunning(t, worker1, client.ObjectKeyFromObject(job))

	if err := manager.Client.Delete(context.Background(), &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: ns + "-worker1"}}); err != nil {
		t.Fatal(err)
	}
	startManager(t, worker2)
	waitRunning(t, worker2, client.ObjectKeyFromObject(job))
	var wl kueue.Workload
	get(t, manager, wlKey, &wl)
	if ptr.Deref(wl.Status.ClusterName, "") != ns+"-worker2" {
		t.Errorf("clusterName %v, want %s-worker2", wl.Status.ClusterName, ns)
	}
}
