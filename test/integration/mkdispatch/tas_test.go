package mkdispatch

import (
	"context"
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// Kueue's MultiKueue-with-TAS example (multikueue/tas): the manager's
// ClusterQueue has a TAS flavor but the manager has no such nodes; the
// worker has them. The manager reserves quota without placing pods
// (delayedTopologyRequest Pending), the worker places them, and the
// manager's admission takes the worker's placement (Ready) before it is
// admitted: Kueue's sample TAS Job (hostname required) runs in the worker.
func TestKueueMultiKueueTASExample(t *testing.T) {
	ctx := context.Background()
	managerSetup := exampleObjects(t, "multikueue/tas/manager-setup.yaml")
	workerSetup := exampleObjects(t, "multikueue/tas/worker-setup.yaml")
	purge(t, manager, managerSetup...)
	purge(t, worker1, workerSetup...)
	purge(t, worker2, workerSetup...)
	ensureNamespace(t, manager, "kueue-system")
	for name, w := range map[string]*framework.Env{"worker1-secret": worker1, "worker2-secret": worker2} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: name},
			Data: map[string][]byte{kueue.MultiKueueKubeConfigSecretKey: w.KubeConfig()}}
		_ = manager.Client.Delete(ctx, secret)
		create(t, manager, secret)
		t.Cleanup(func() { _ = manager.Client.Delete(context.Background(), secret) })
	}
	for _, u := range managerSetup {
		createUnstructured(t, manager, u.DeepCopy())
	}
	for _, u := range workerSetup {
		createUnstructured(t, worker1, u.DeepCopy())
	}
	for i := 1; i <= 2; i++ {
		tasNode(t, worker1, fmt.Sprintf("mk-tas-node-%d", i))
	}
	startWithWebhooks(t)
	startManager(t, worker1)
	waitCheck(t, "multikueue-ac", "Active")

	var job *batchv1.Job
	for _, e := range testutil.KueueExamples(t, "batch", func(k string) bool { return k == "Job" }) {
		if e.File == "multikueue/dev/sample-tas-job.yaml" && e.Obj.GetName() == "tas-sample-job" {
			job = &batchv1.Job{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Obj.Object, job); err != nil {
				t.Fatal(err)
			}
		}
	}
	if job == nil {
		t.Fatal("multikueue/dev/sample-tas-job.yaml has no tas-sample-job")
	}
	_ = manager.Client.Delete(ctx, job.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))
	eventually(t, "the webhook answers", func() error {
		return manager.Client.Create(ctx, job.DeepCopy(), client.DryRunAll)
	})
	create(t, manager, job)
	t.Cleanup(func() {
		_ = manager.Client.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	wlKey := client.ObjectKey{Namespace: job.Namespace, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	eventually(t, "the job runs in worker1, placed there", func() error {
		var remote batchv1.Job
		if err := worker1.Client.Get(ctx, client.ObjectKeyFromObject(job), &remote); err != nil {
			return err
		}
		if ptr.Deref(remote.Spec.Suspend, true) {
			return fmt.Errorf("suspended in the worker")
		}
		var rw kueue.Workload
		get(t, worker1, wlKey, &rw)
		if rw.Status.Admission == nil || rw.Status.Admission.PodSetAssignments[0].TopologyAssignment == nil {
			return fmt.Errorf("no topology assignment in the worker: %+v", rw.Status.Admission)
		}
		return nil
	})
	var rw kueue.Workload
	get(t, worker1, wlKey, &rw)
	eventually(t, "the manager's admission carries the worker's placement", func() error {
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) || ptr.Deref(wl.Status.ClusterName, "") != "worker1" {
			return fmt.Errorf("clusterName %v conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
		}
		psa := wl.Status.Admission.PodSetAssignments[0]
		if ptr.Deref(psa.DelayedTopologyRequest, "") != kueue.DelayedTopologyRequestStateReady ||
			!equality.Semantic.DeepEqual(psa.TopologyAssignment, rw.Status.Admission.PodSetAssignments[0].TopologyAssignment) {
			return fmt.Errorf("delayed %v topology %+v", psa.DelayedTopologyRequest, psa.TopologyAssignment)
		}
		return nil
	})
}

// tasNode creates a Ready, untainted node of the example's TAS node group
// with 4 cpu and 16Gi.
func tasNode(t *testing.T, e *framework.Env, name string) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"cloud.provider.com/node-group": "tas-node", corev1.LabelHostname: name}}}
	_ = e.Client.Delete(ctx, node)
	eventually(t, "node "+name+" is created", func() error { return e.Client.Create(ctx, node) })
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), node) })
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods: resource.MustParse("110")}
	node.Status = corev1.NodeStatus{Allocatable: capacity, Capacity: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}
	if err := e.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	// The API server taints a new node not-ready; with no node controller
	// here, the test lifts the taint as it would.
	node.Spec.Taints = nil
	if err := e.Client.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}
