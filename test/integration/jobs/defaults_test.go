package jobs

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A Job whose containers set no requests is charged what its pods will
// get from the namespace's LimitRange, plus its RuntimeClass's overhead:
// with 4 CPUs of quota, a LimitRange default request of 1 CPU and an
// overhead of 500m, a Job of 3 such pods (4.5 CPUs) waits while one of 2
// pods (3 CPUs) runs.
func TestJobIsChargedItsLimitRangeDefaultsAndOverhead(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "4")
	rc := "kuota-test-" + ns
	create(t,
		&corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"}, Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer,
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: rc}, Handler: "runc",
			Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}},
	)
	bare := func(name string, pods int32) {
		j := newJob(ns, name, "lq", pods, "1")
		j.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		j.Spec.Template.Spec.RuntimeClassName = ptr.To(rc)
		create(t, j)
	}
	bare("small", 2)
	waitRunning(t, ns, "small", fl)
	wl := workloadOf(t, getJob(t, ns, "small"))
	usage := wl.Status.Admission.PodSetAssignments[0].ResourceUsage[corev1.ResourceCPU]
	if !usage.Equal(resource.MustParse("3")) {
		t.Errorf("the Job of 2 pods is charged %s CPU, want 3 (1 from the LimitRange and 500m overhead each)", usage.String())
	}
	bare("large", 3)
	eventually(t, "the larger Job waits for quota", func() error {
		wl := workloadOf(t, getJob(t, ns, "large"))
		if wl == nil {
			return fmt.Errorf("no Workload yet")
		}
		if c := condition(wl, "QuotaReserved"); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		return nil
	})
	afterCycles(t, func() error {
		if j := getJob(t, ns, "large"); !ptr.Deref(j.Spec.Suspend, false) {
			return fmt.Errorf("the 4.5-CPU Job started within 4 CPUs of quota")
		}
		return nil
	})
}
