package sparkapps

import (
	"maps"
	"testing"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/spark"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

// Spark's driver creates the executor pods and controls them; the driver
// pod is controlled by the SparkApplication, so garbage collection deletes
// the driver with the application, then the executors, which may still
// terminate. An executor carries the labels of spec.executor as Kuota
// admitted it, the application's UID among them: the deleted
// application's Workload keeps its finalizer, and its quota, until the
// executor is gone, also when the manager restarts in the middle of the
// deletion.
func TestDeletedSparkApplicationHoldsQuotaWhileExecutorTerminates(t *testing.T) {
	framework.EachManager(t, func(t *testing.T, restart bool) {
		s := setUp(t, "10")
		a := s.sparkApp("gone", 1)
		s.create(a)
		s.waitRunning(a)
		s.state(a, sparkv1beta2.ApplicationStateRunning, "")
		wl := s.waitWorkload(a)
		if err := s.get(a); err != nil {
			t.Fatal(err)
		}
		exec := a.Spec.Executor.SparkPodSpec
		if got := exec.Labels[jobframework.PodJobUIDLabel]; got != string(a.UID) {
			t.Fatalf("spec.executor label %s=%q, want the application's UID %s", jobframework.PodJobUIDLabel, got, a.UID)
		}
		tpl := podSetTemplate(t, wl, spark.ExecutorPodSet)
		spec := *tpl.Spec.DeepCopy()
		spec.NodeSelector = maps.Clone(exec.NodeSelector)
		spec.Tolerations = append([]corev1.Toleration(nil), exec.Tolerations...)
		labels := maps.Clone(exec.Labels)
		labels["spark-role"] = "executor"
		labels["spark-exec-id"] = "1"
		labels["sparkoperator.k8s.io/app-name"] = a.Name
		labels["sparkoperator.k8s.io/launched-by-spark-operator"] = "true"
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: "gone-exec-1", Finalizers: []string{framework.HoldFinalizer},
				Labels: labels, Annotations: maps.Clone(exec.Annotations),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "gone-driver",
					UID: "9a4e1c7b-3f28-4d65-b0e9-2c8d5f1a6e37", Controller: ptr.To(true)}}},
			Spec: spec,
		}
		s.create(pod)
		d := framework.Deletion{Client: s.c, ClusterQueue: s.cq, Job: a, Workload: wl, Pod: pod}
		if restart {
			d.Restart = framework.Restartable(t, s.m)
		}
		d.Check(t)
	})
}

// podSetTemplate is the pod template of the Workload's PodSet name: the
// pod Spark would create, before the admission.
func podSetTemplate(t *testing.T, wl *kueue.Workload, name kueue.PodSetReference) corev1.PodTemplateSpec {
	t.Helper()
	for _, ps := range wl.Spec.PodSets {
		if ps.Name == name {
			return ps.Template
		}
	}
	t.Fatalf("Workload %s has no PodSet %s", wl.Name, name)
	return corev1.PodTemplateSpec{}
}
