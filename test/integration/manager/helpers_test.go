package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// startManager runs a manager for the test and stops it at cleanup.
func startManager(t *testing.T, mutate ...func(*configapi.Configuration)) *framework.Manager {
	t.Helper()
	cfg, err := framework.ManagerConfig(mutate...)
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
	return m
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
	}
}

// namespace creates a namespace for the test.
func namespace(t *testing.T) string {
	t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func flavor(name string, labels map[string]string) *kueue.ResourceFlavor {
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ResourceFlavorSpec{NodeLabels: labels}}
}

// clusterQueue builds a ClusterQueue with cpu quota in one flavor; open to
// every namespace.
func clusterQueue(name, cohort, flavorName, nominal string, mutate ...func(*kueue.ClusterQueue)) *kueue.ClusterQueue {
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
		CohortName:        kueue.CohortReference(cohort),
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{
			CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
			Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(flavorName),
				Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse(nominal)}}}},
		}},
	}}
	for _, m := range mutate {
		m(cq)
	}
	return cq
}

func localQueue(ns, name, cq string) *kueue.LocalQueue {
	return &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}}
}

// newWorkload builds a Workload of count pods requesting cpu each.
func newWorkload(ns, name, lq string, count int32, cpu string, priority int32) *kueue.Workload {
	return &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: kueue.WorkloadSpec{
		QueueName: kueue.LocalQueueName(lq),
		Priority:  ptr.To(priority),
		PodSets: []kueue.PodSet{{Name: "main", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		}}}},
	}}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = cond(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not true after %s: %v", what, timeout, err)
}

func getWorkload(t *testing.T, ns, name string) *kueue.Workload {
	t.Helper()
	var wl kueue.Workload
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

// condition returns a workload condition's status and reason.
func condition(wl *kueue.Workload, typ string) (metav1.ConditionStatus, string) {
	c := meta.FindStatusCondition(wl.Status.Conditions, typ)
	if c == nil {
		return "", ""
	}
	return c.Status, c.Reason
}

// waitAdmitted waits until the workload is admitted, in the given queue.
func waitAdmitted(t *testing.T, ns, name, cq string) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("workload %s admitted", name), func() error {
		wl := getWorkload(t, ns, name)
		if st, _ := condition(wl, kueue.WorkloadAdmitted); st != metav1.ConditionTrue {
			return fmt.Errorf("Admitted=%q, conditions %v", st, wl.Status.Conditions)
		}
		if wl.Status.Admission == nil || string(wl.Status.Admission.ClusterQueue) != cq {
			return fmt.Errorf("admission %+v, want ClusterQueue %s", wl.Status.Admission, cq)
		}
		return nil
	})
}

// waitPending waits until the workload waits with the given reason.
func waitPending(t *testing.T, ns, name, reason string) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("workload %s pending (%s)", name, reason), func() error {
		wl := getWorkload(t, ns, name)
		st, r := condition(wl, kueue.WorkloadQuotaReserved)
		if st != metav1.ConditionFalse || r != reason || wl.Status.Admission != nil {
			return fmt.Errorf("QuotaReserved=%q reason %q admission %v", st, r, wl.Status.Admission)
		}
		return nil
	})
}

// finish marks a workload Finished, as its job would.
func finish(t *testing.T, ns, name string) {
	t.Helper()
	wl := getWorkload(t, ns, name)
	meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: kueue.WorkloadFinishedSucceeded, Message: "done"})
	if err := env.Client.Status().Update(context.Background(), wl); err != nil {
		t.Fatalf("finishing %s: %v", name, err)
	}
}

// waitQueueStatus waits until a ClusterQueue's status satisfies check.
func waitQueueStatus(t *testing.T, name string, check func(*kueue.ClusterQueueStatus) error) {
	t.Helper()
	eventually(t, 20*time.Second, "ClusterQueue "+name+" status", func() error {
		var cq kueue.ClusterQueue
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, &cq); err != nil {
			return err
		}
		return check(&cq.Status)
	})
}

// reservedCPU returns the reserved cpu of a flavor in a ClusterQueue status.
func reservedCPU(st *kueue.ClusterQueueStatus, flavorName string) string {
	for _, f := range st.FlavorsReservation {
		if string(f.Name) == flavorName {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU {
					return r.Total.String()
				}
			}
		}
	}
	return "0"
}
