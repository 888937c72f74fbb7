package mkdispatch

import (
	"context"
	"fmt"
	"net"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// Kueue's MultiKueue example (multikueue/multikueue-setup.yaml) applied
// unchanged to the manager, the worker given the same queues without the
// check (and Kuota), the kubeconfig Secret the example names created in
// kueue-system: Kueue's sample Job (jobs/sample-job.yaml) gets
// managedBy from the manager's webhook, runs in the worker, and completes
// in the manager when it completes there.
func TestKueueMultiKueueExample(t *testing.T) {
	ctx := context.Background()
	setup := exampleObjects(t, "multikueue/multikueue-setup.yaml")
	if len(setup) != 6 {
		t.Fatalf("the example has %d kueue.x-k8s.io objects, want 6", len(setup))
	}
	purge(t, manager, setup...)
	purge(t, worker2, setup...)
	ensureNamespace(t, manager, "kueue-system")
	_ = manager.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "worker1-secret"}})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "worker1-secret"},
		Data: map[string][]byte{kueue.MultiKueueKubeConfigSecretKey: worker2.KubeConfig()}}
	create(t, manager, secret)
	t.Cleanup(func() { _ = manager.Client.Delete(context.Background(), secret) })
	for _, u := range setup {
		createUnstructured(t, manager, u.DeepCopy())
		switch u.GetKind() {
		case "ResourceFlavor", "LocalQueue":
			createUnstructured(t, worker2, u.DeepCopy())
		case "ClusterQueue":
			w := u.DeepCopy()
			unstructured.RemoveNestedField(w.Object, "spec", "admissionChecksStrategy")
			createUnstructured(t, worker2, w)
		}
	}
	startWithWebhooks(t)
	startManager(t, worker2)
	waitCheck(t, "sample-multikueue", "Active")

	var job *batchv1.Job
	for _, e := range testutil.KueueExamples(t, "batch", func(k string) bool { return k == "Job" }) {
		if e.File == "jobs/sample-job.yaml" {
			job = &batchv1.Job{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Obj.Object, job); err != nil {
				t.Fatal(err)
			}
		}
	}
	if job == nil {
		t.Fatal("jobs/sample-job.yaml not found")
	}
	eventually(t, "the webhook hands the sample Job to MultiKueue", func() error {
		probe := job.DeepCopy()
		if err := manager.Client.Create(ctx, probe, client.DryRunAll); err != nil {
			return err
		}
		if ptr.Deref(probe.Spec.ManagedBy, "") != jobframework.MultiKueueManagedBy {
			return fmt.Errorf("managedBy %v", probe.Spec.ManagedBy)
		}
		return nil
	})
	create(t, manager, job)
	t.Cleanup(func() {
		_ = manager.Client.Delete(context.Background(), job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	})
	wlKey := client.ObjectKey{Namespace: job.Namespace, Name: jobframework.WorkloadName(job.Name, job.UID, batchjob.GVK)}
	eventually(t, "the sample Job runs in the worker", func() error {
		var remote batchv1.Job
		if err := worker2.Client.Get(ctx, client.ObjectKeyFromObject(job), &remote); err != nil {
			return err
		}
		if ptr.Deref(remote.Spec.Suspend, true) {
			return fmt.Errorf("suspended in the worker")
		}
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if ptr.Deref(wl.Status.ClusterName, "") != "multikueue-test-worker1" || !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
			return fmt.Errorf("clusterName %v conditions %v", wl.Status.ClusterName, wl.Status.Conditions)
		}
		return nil
	})
	err := setJobStatus(worker2, client.ObjectKeyFromObject(job), func(st *batchv1.JobStatus) {
		now := metav1.Now()
		st.StartTime, st.Succeeded, st.CompletionTime = &now, 3, &now
		st.Conditions = append(st.Conditions,
			batchv1.JobCondition{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now},
			batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now, LastProbeTime: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the manager's Job completes and its Workload finishes", func() error {
		var local batchv1.Job
		get(t, manager, client.ObjectKeyFromObject(job), &local)
		if local.Status.Succeeded != 3 {
			return fmt.Errorf("succeeded %d", local.Status.Succeeded)
		}
		var wl kueue.Workload
		get(t, manager, wlKey, &wl)
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
}

func createUnstructured(t *testing.T, e *framework.Env, u *unstructured.Unstructured) {
	t.Helper()
	if err := e.Client.Create(context.Background(), u); err != nil {
		t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), u) })
}

// startWithWebhooks starts Kuota on the manager with the job webhooks
// called by the API server (local mode).
func startWithWebhooks(t *testing.T, mutate ...func(*configapi.Configuration)) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg, err := managerConfig(append([]func(*configapi.Configuration){func(c *configapi.Configuration) {
		c.Webhook.Port = ptr.To(port)
		c.Webhook.CertDir = t.TempDir()
	}}, mutate...)...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manager.StartManagerWith(cfg, func(o *app.Options) {
		o.LocalWebhooks = true
		o.Webhooks = []func(ctrl.Manager) error{app.JobWebhooks(cfg)}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
}
