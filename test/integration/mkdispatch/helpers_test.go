package mkdispatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// startManager starts Kuota for a cluster with the test configuration,
// changed by mutate, and stops it when the test ends.
func startManager(t *testing.T, e *framework.Env, mutate ...func(*configapi.Configuration)) {
	t.Helper()
	cfg, err := managerConfig(mutate...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping manager: %v", err)
		}
	})
}

// managerConfig is the test configuration with the batch/v1 Job and
// JobSet integrations.
func managerConfig(mutate ...func(*configapi.Configuration)) (*configapi.Configuration, error) {
	return framework.ManagerConfig(append([]func(*configapi.Configuration){func(c *configapi.Configuration) {
		c.Integrations = &configapi.Integrations{Frameworks: []string{batchjob.Integration.Name, jobset.FrameworkName}}
	}}, mutate...)...)
}

func create(t *testing.T, e *framework.Env, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := e.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

func ensureNamespace(t *testing.T, e *framework.Env, name string) {
	t.Helper()
	err := e.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func get(t *testing.T, e *framework.Env, key client.ObjectKey, obj client.Object) {
	t.Helper()
	if err := e.Client.Get(context.Background(), key, obj); err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not true after 60s: %v", what, err)
}

// newJob is a suspended Job handed to MultiKueue, as the webhook leaves a
// Job of a LocalQueue whose ClusterQueue has a MultiKueue check.
func newJob(ns, name string, parallelism int32, cpu string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{jobframework.QueueNameLabel: "lq"}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(parallelism), Completions: ptr.To(parallelism), Suspend: ptr.To(true),
			ManagedBy: ptr.To(jobframework.MultiKueueManagedBy),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			}},
		},
	}
}

// setRemoteStatus plays worker1's Job controller.
func setRemoteStatus(t *testing.T, key client.ObjectKey, change func(*batchv1.JobStatus)) {
	t.Helper()
	if err := setJobStatus(worker1, key, change); err != nil {
		t.Fatal(err)
	}
}

// setJobStatus plays a cluster's Job controller.
func setJobStatus(e *framework.Env, key client.ObjectKey, change func(*batchv1.JobStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var j batchv1.Job
		if err := e.Client.Get(context.Background(), key, &j); err != nil {
			return err
		}
		change(&j.Status)
		return e.Client.Status().Update(context.Background(), &j)
	})
}

func waitCheck(t *testing.T, name, reason string) {
	t.Helper()
	eventually(t, "check "+name+" reason "+reason, func() error {
		var ac kueue.AdmissionCheck
		get(t, manager, client.ObjectKey{Name: name}, &ac)
		c := meta.FindStatusCondition(ac.Status.Conditions, kueue.AdmissionCheckActive)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			return fmt.Errorf("Active condition %+v", c)
		}
		return nil
	})
}

func waitCluster(t *testing.T, name string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	eventually(t, "cluster "+name+" reason "+reason, func() error {
		var mkc kueue.MultiKueueCluster
		get(t, manager, client.ObjectKey{Name: name}, &mkc)
		c := meta.FindStatusCondition(mkc.Status.Conditions, kueue.MultiKueueClusterActive)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("Active condition %+v", c)
		}
		return nil
	})
}

// purge deletes the objects named like objs (their finalizers dropped) and
// waits until they are gone, so that example tests, which share Kueue's
// fixed names, start clean whatever ran before.
func purge(t *testing.T, e *framework.Env, objs ...*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(o.GroupVersionKind())
		key := client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetName()}
		if err := e.Client.Get(ctx, key, cur); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			t.Fatal(err)
		}
		if len(cur.GetFinalizers()) > 0 {
			cur.SetFinalizers(nil)
			if err := e.Client.Update(ctx, cur); client.IgnoreNotFound(err) != nil {
				t.Fatal(err)
			}
		}
		if err := e.Client.Delete(ctx, cur); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		eventually(t, "the leftover "+o.GetKind()+" "+o.GetName()+" is gone", func() error {
			if err := e.Client.Get(ctx, key, cur); !apierrors.IsNotFound(err) {
				return fmt.Errorf("still there (%v)", err)
			}
			return nil
		})
	}
}

// exampleObjects returns the kueue.x-k8s.io objects of one of Kueue's
// example files.
func exampleObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, e := range testutil.KueueExamples(t, kueue.GroupVersion.Group, func(string) bool { return true }) {
		if e.File == file {
			out = append(out, e.Obj)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no kueue.x-k8s.io objects in %s", file)
	}
	return out
}

// dumpOnFailure logs, when the test failed, the manager's Workload and
// each worker's copy, to show where a dispatch stopped.
func dumpOnFailure(t *testing.T, key client.ObjectKey) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		var evs corev1.EventList
		_ = manager.Client.List(context.Background(), &evs, client.InNamespace(key.Namespace))
		for _, ev := range evs.Items {
			t.Logf("event %s %s %s %s: %s", ev.FirstTimestamp.Format("15:04:05"), ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Message)
		}
		for name, e := range map[string]*framework.Env{"manager": manager, "worker1": worker1, "worker2": worker2} {
			var wl kueue.Workload
			if err := e.Client.Get(context.Background(), key, &wl); err != nil {
				t.Logf("%s: Workload %s: %v", name, key, err)
				continue
			}
			t.Logf("%s: Workload %s labels %v deleting %v clusterName %v nominated %v checks %+v conditions %+v", name, key, wl.Labels,
				!wl.DeletionTimestamp.IsZero(), ptr.Deref(wl.Status.ClusterName, ""), wl.Status.NominatedClusterNames, wl.Status.AdmissionChecks, wl.Status.Conditions)
		}
	})
}
