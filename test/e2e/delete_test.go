package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/batchjob"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// holdFinalizer stands in for a long termination grace period: a pod
// carrying it stays, terminating, until the test removes it (kwok would
// otherwise delete a deleted pod at once).
const holdFinalizer = "e2e.kuota.dev/terminating"

// A running Job deleted with background propagation while its pods
// terminate keeps its quota: garbage collection deletes the Workload, which
// stays with its finalizer, and the next Job waits. Once the pods are gone
// the Workload goes, the next Job is admitted, and nothing of the first Job
// is left.
func TestDeletedJobKeepsQuotaUntilItsPodsAreGone(t *testing.T) {
	ctx := context.Background()
	ns, cq := queues(t, "2")
	keepRunning(t, ns)
	first := job(ns, "first", "lq", 2, 2, "1")
	first.Spec.Template.Labels = map[string]string{keepRunningLabel: "true"}
	create(t, first)
	var running []corev1.Pod
	eventually(t, 30*time.Second, "first runs 2 pods on the nodes", func() error {
		running = pods(t, ns, "first")
		n := 0
		for _, p := range running {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" {
				n++
			}
		}
		if n != 2 || len(running) != 2 {
			return fmt.Errorf("%d pods, %d running", len(running), n)
		}
		return nil
	})
	for i := range running {
		holdPod(t, &running[i])
	}
	first = getJob(t, ns, "first")
	wl, err := workloadOf(t, first)
	if err != nil || !slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) {
		t.Fatalf("the Workload (%v) has finalizers %v, want %s", err, wl.Finalizers, kueue.ResourceInUseFinalizerName)
	}

	if err := suite.client.Delete(ctx, first, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the garbage collector deletes the Workload and the pods", func() error {
		wl, err := workloadOf(t, first)
		if err != nil {
			return err
		}
		if wl.DeletionTimestamp.IsZero() || !slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) {
			return fmt.Errorf("Workload deleting %v, finalizers %v", !wl.DeletionTimestamp.IsZero(), wl.Finalizers)
		}
		for _, p := range pods(t, ns, "first") {
			if p.DeletionTimestamp.IsZero() {
				return fmt.Errorf("pod %s not deleted", p.Name)
			}
		}
		return nil
	})

	create(t, job(ns, "second", "lq", 1, 1, "1"))
	eventually(t, 30*time.Second, "second waits for quota", func() error {
		wl, err := workloadOf(t, getJob(t, ns, "second"))
		if err != nil {
			return err
		}
		if !hasCondition(wl, kueue.WorkloadQuotaReserved, metav1.ConditionFalse) {
			return fmt.Errorf("conditions %v", wl.Status.Conditions)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // a few scheduling cycles
	if wl, err := workloadOf(t, first); err != nil || !slices.Contains(wl.Finalizers, kueue.ResourceInUseFinalizerName) {
		t.Fatalf("while the pods terminate, the Workload must stay with its finalizer (%v)", err)
	}
	for _, p := range pods(t, ns, "first") {
		if p.Status.Phase != corev1.PodRunning {
			t.Fatalf("pod %s is %s, want it still running", p.Name, p.Status.Phase)
		}
	}
	if !ptr.Deref(getJob(t, ns, "second").Spec.Suspend, false) {
		t.Fatal("second started while first's pods still terminate")
	}
	if n := reserving(t, cq); n != 1 {
		t.Fatalf("the ClusterQueue reserves for %d workloads, want the deleted Job's", n)
	}

	for i := range running {
		releasePod(t, &running[i])
	}
	eventually(t, 30*time.Second, "first's Workload is gone", func() error {
		if wl, err := workloadOf(t, first); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there (%v): finalizers %v", err, wl.Finalizers)
		}
		return nil
	})
	waitComplete(t, ns, "second", 60*time.Second)
	eventually(t, 30*time.Second, "nothing of first is left", func() error {
		if n := len(pods(t, ns, "first")); n != 0 {
			return fmt.Errorf("%d pods of first", n)
		}
		var wls kueue.WorkloadList
		if err := suite.client.List(ctx, &wls, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, w := range wls.Items {
			if w.Labels[jobframework.JobUIDLabel] == string(first.UID) ||
				w.Name == jobframework.WorkloadName("first", first.UID, batchjob.GVK) {
				return fmt.Errorf("Workload %s left", w.Name)
			}
		}
		return nil
	})
}

// keepRunningLabel marks pods that keepRunning keeps from finishing.
const keepRunningLabel = "e2e.kuota.dev/keep-running"

// keepRunning stops kwok from completing the pods labelled
// keepRunningLabel in namespace ns (its fast stages complete a Job's pods
// the moment they run): a ValidatingAdmissionPolicy refuses to set their
// phase to Succeeded or Failed. It waits until the policy is in force.
func keepRunning(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	name := ns + "-keep-running"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/status"}},
				},
			}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "labelled",
				Expression: fmt.Sprintf("has(object.metadata.labels) && '%s' in object.metadata.labels", keepRunningLabel)}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(object.status.phase) || (object.status.phase != 'Succeeded' && object.status.phase != 'Failed')",
				Message:    "the e2e test keeps this pod running",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns}}},
		},
	}
	create(t, policy, binding)
	t.Cleanup(func() {
		_ = suite.client.Delete(ctx, binding)
		_ = suite.client.Delete(ctx, policy)
	})
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keep-running-probe", Labels: map[string]string{keepRunningLabel: "true"}},
		Spec: corev1.PodSpec{NodeName: "no-such-node", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	create(t, probe)
	eventually(t, 30*time.Second, "the keep-running policy is in force", func() error {
		var p corev1.Pod
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(probe), &p); err != nil {
			return err
		}
		p.Status.Phase = corev1.PodSucceeded
		err := suite.client.Status().Update(ctx, &p, client.DryRunAll)
		if err == nil {
			return fmt.Errorf("the probe's completion was allowed")
		}
		if !strings.Contains(err.Error(), "keeps this pod running") {
			return err
		}
		return nil
	})
	_ = suite.client.Delete(ctx, probe, client.GracePeriodSeconds(0))
}

// holdPod adds holdFinalizer to a pod.
func holdPod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	eventually(t, 10*time.Second, "pod "+p.Name+" held", func() error {
		var cur corev1.Pod
		if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(p), &cur); err != nil {
			return err
		}
		cur.Finalizers = append(cur.Finalizers, holdFinalizer)
		return suite.client.Update(context.Background(), &cur)
	})
	t.Cleanup(func() { releasePod(t, p) })
}

// releasePod removes holdFinalizer from a pod, if it is still there.
func releasePod(t *testing.T, p *corev1.Pod) {
	t.Helper()
	eventually(t, 10*time.Second, "pod "+p.Name+" released", func() error {
		var cur corev1.Pod
		if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(p), &cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !slices.Contains(cur.Finalizers, holdFinalizer) {
			return nil
		}
		cur.Finalizers = slices.DeleteFunc(cur.Finalizers, func(f string) bool { return f == holdFinalizer })
		return suite.client.Update(context.Background(), &cur)
	})
}
