package jobs

import (
	"context"
	"fmt"
	"strings"
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

// A Job whose pods the API server would refuse for the namespace's
// LimitRanges waits, saying why, instead of taking quota for pods that
// cannot be created: one above the LimitRange's max until the LimitRange
// goes, one whose request is above the limit the LimitRange gives it.
func TestJobOutsideItsLimitRangeWaits(t *testing.T) {
	startManager(t)
	ns, _, fl := queues(t, "8")
	create(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "max"}, Spec: corev1.LimitRangeSpec{
		Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}})
	// Its own limit: the API server gives the LimitRange a default limit
	// equal to its max, which would be below the request.
	greedy := newJob(ns, "greedy", "lq", 1, "2")
	greedy.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	create(t, greedy)
	waitPendingWith(t, ns, "greedy", "didn't satisfy LimitRange constraints: ", "cpu request 2 is above the maximum 1")

	otherNS, _, _ := queues(t, "8")
	create(t, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "default-limit"}, Spec: corev1.LimitRangeSpec{
		Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Default: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}})
	create(t, newJob(otherNS, "over-limit", "lq", 1, "700m"))
	waitPendingWith(t, otherNS, "over-limit", "resource validation failed: ", "cpu request 700m exceeds its limit 500m")

	if err := env.Client.Delete(context.Background(), &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "max"}}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, ns, "greedy", fl)
}

// waitPendingWith waits for a Job's Workload to be pending with a
// QuotaReserved message that has these parts, while the Job stays
// suspended.
func waitPendingWith(t *testing.T, ns, job string, parts ...string) {
	t.Helper()
	waitPendingReason(t, ns, job, "Pending", parts...)
}

// waitPendingReason is waitPendingWith for a given QuotaReserved reason.
func waitPendingReason(t *testing.T, ns, job, reason string, parts ...string) {
	t.Helper()
	eventually(t, "Job "+job+" pending with "+strings.Join(parts, " ... "), func() error {
		wl := workloadOf(t, getJob(t, ns, job))
		if wl == nil {
			return fmt.Errorf("no Workload yet")
		}
		c := condition(wl, "QuotaReserved")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != reason {
			return fmt.Errorf("QuotaReserved %+v", c)
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return fmt.Errorf("QuotaReserved message %q lacks %q", c.Message, p)
			}
		}
		return nil
	})
	afterCycles(t, func() error {
		if j := getJob(t, ns, job); !ptr.Deref(j.Spec.Suspend, false) {
			return fmt.Errorf("Job %s started with pods the API server would refuse", job)
		}
		return nil
	})
}
