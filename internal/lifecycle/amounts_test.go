package lifecycle

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// withMemory gives every pod of the test workload's PodSet that much
// memory and sets its count.
func withMemory(b *wlb, count int32, memory string) *wlb {
	ps := &b.wl.Spec.PodSets[0]
	ps.Count = count
	ps.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse(memory)
	return b
}

// TestRequestsThatCannotBeCountedAreMisconfigured: a workload whose
// requests Kuota cannot count (a quantity, one pod's total, or the whole
// workload's) stays out of the queues, pending with reason Misconfigured
// and a message naming the PodSet and the resource; a large one Kuota can
// count is queued.
func TestRequestsThatCannotBeCountedAreMisconfigured(t *testing.T) {
	twoPodSets := withMemory(newWL(), 3, "1Ei") // 3Ei each, 6Ei together
	second := twoPodSets.wl.Spec.PodSets[0]
	second.Name = "second"
	twoPodSets.wl.Spec.PodSets = append(twoPodSets.wl.Spec.PodSets, second)
	for _, tc := range []struct {
		name string
		wl   *kueue.Workload
		want string // in the message; "" for a workload that is queued
	}{
		{"large but countable", withMemory(newWL(), 4, "1Ei").wl, ""},
		{"one quantity", withMemory(newWL(), 1, "5Ei").wl, "spec.podSets[0]: container c: 5Ei of memory is more than Kuota can count (at most 4Ei)"},
		{"count times the pod", withMemory(newWL(), 5, "1Ei").wl, "spec.podSets[0]: with 5 pods, the workload requests more memory than Kuota can count (at most 4Ei)"},
		{"all PodSets together", twoPodSets.wl, "spec.podSets[1]: with 3 pods, the workload requests more memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step := Next(tc.wl, healthyView(), &Options{}, t0)
			place := Place(tc.wl, healthyView())
			if tc.want == "" {
				if step.Action != None || place != Queued {
					t.Fatalf("step %+v, place %s; want it queued", step, place)
				}
				return
			}
			if step.Action != SetPending || step.Reason != kueue.WorkloadReasonMisconfigured || !strings.Contains(step.Message, tc.want) {
				t.Fatalf("step %+v; want SetPending Misconfigured with %q", step, tc.want)
			}
			if place != Aside {
				t.Fatalf("placed %s, want Aside", place)
			}
		})
	}
}

// TestAdmittedUsageThatCannotBeCountedStaysTaken: usage another writer
// recorded beyond what Kuota counts is counted as resources.Max (the
// quota stays taken), never as a small or unlimited value.
func TestAdmittedUsageThatCannotBeCountedStaysTaken(t *testing.T) {
	w := newWL().reserved("cq", true).wl
	psa := &w.Status.Admission.PodSetAssignments[0]
	psa.Flavors[corev1.ResourceMemory] = "f"
	psa.ResourceUsage[corev1.ResourceMemory] = resource.MustParse("16Ei")
	a := Admitted(w, healthyView(), &Options{})
	if got := a.Usage[resources.FlavorResource{Flavor: "f", Resource: corev1.ResourceMemory}]; got != resources.Max {
		t.Fatalf("memory usage %d, want resources.Max", got)
	}
}
