package provisioningrequests

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	autoscaling "k8s.io/autoscaler/cluster-autoscaler/apis/provisioningrequest/autoscaling.x-k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// start runs a manager with the batch/v1 Job integration and returns the
// environment's client (its scheme knows ProvisioningRequests).
func start(t *testing.T) client.Client {
	t.Helper()
	cfg, err := framework.ManagerConfig()
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
	return env.Client
}

// example returns the objects of one of Kueue's example manifests under
// examples/provisioning (read from the shared folder beside the
// checkout), of the given API group.
func example(t *testing.T, name, group string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, e := range testutil.KueueExamples(t, group, func(string) bool { return true }) {
		if e.File == filepath.Join("provisioning", name) {
			out = append(out, e.Obj)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s objects in Kueue's example provisioning/%s", group, name)
	}
	return out
}

// exampleJob is the example's Job in namespace ns, suspended as Kuota's
// webhook would leave it (no webhook runs here).
func exampleJob(t *testing.T, ns string) *batchv1.Job {
	t.Helper()
	objs := example(t, "sample-job.yaml", "batch")
	var job batchv1.Job
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &job); err != nil {
		t.Fatal(err)
	}
	job.Namespace = ns
	suspend := true
	job.Spec.Suspend = &suspend
	return &job
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, 50*time.Millisecond, what, cond)
}

// workloadOf returns the Workload of the job.
func workloadOf(ctx context.Context, c client.Client, job *batchv1.Job) (*kueue.Workload, error) {
	var list kueue.WorkloadList
	if err := c.List(ctx, &list, client.InNamespace(job.Namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, o := range list.Items[i].OwnerReferences {
			if o.UID == job.UID {
				return &list.Items[i], nil
			}
		}
	}
	return nil, fmt.Errorf("no Workload for job %s yet", job.Name)
}

func checkState(wl *kueue.Workload, name string) *kueue.AdmissionCheckState {
	for i := range wl.Status.AdmissionChecks {
		if string(wl.Status.AdmissionChecks[i].Name) == name {
			return &wl.Status.AdmissionChecks[i]
		}
	}
	return nil
}

// request waits for the named ProvisioningRequest.
func request(t *testing.T, c client.Client, ns, name string) *autoscaling.ProvisioningRequest {
	t.Helper()
	var pr autoscaling.ProvisioningRequest
	eventually(t, "ProvisioningRequest "+name+" exists", func() error {
		return c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &pr)
	})
	return &pr
}

// setCondition writes a condition of the request, as cluster-autoscaler
// would.
func setCondition(t *testing.T, c client.Client, pr *autoscaling.ProvisioningRequest, typ, message string) {
	t.Helper()
	eventually(t, "setting "+typ+" on "+pr.Name, func() error {
		var cur autoscaling.ProvisioningRequest
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(pr), &cur); err != nil {
			return err
		}
		meta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, Message: message})
		return c.Status().Update(context.Background(), &cur)
	})
}

func activeCondition(ctx context.Context, c client.Client, name string) (*metav1.Condition, error) {
	var ac kueue.AdmissionCheck
	if err := c.Get(ctx, client.ObjectKey{Name: name}, &ac); err != nil {
		return nil, err
	}
	cond := meta.FindStatusCondition(ac.Status.Conditions, kueue.AdmissionCheckActive)
	if cond == nil {
		return nil, fmt.Errorf("AdmissionCheck %s has no Active condition yet", name)
	}
	return cond, nil
}
