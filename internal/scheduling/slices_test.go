package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/workload"
)

// The admission of a growing slice is written at its whole size: the pods
// it adds were assigned, the running ones keep their flavor.
func TestWholeAssignmentOfAGrowingSlice(t *testing.T) {
	perPod := resources.Requests{corev1.ResourceCPU: 2000, corev1.ResourcePods: resources.One}
	shape := workload.NewShape([]workload.PodSetShape{{Name: "main", Count: 2, PerPod: perPod}})
	b := kueue.ResourceFlavorReference("b")
	fr := resources.FlavorResource{Flavor: b, Resource: corev1.ResourceCPU}
	added := &flavors.Assignment{Mode: flavors.Fit, Usage: resources.FlavorResourceQuantities{fr: 4000},
		PodSets: []flavors.PodSetAssignment{{Name: "main", Count: 2, Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: b},
			Requests: perPod.Scaled(2)}}}
	w := &workload.Info{Shape: shape, Replaces: &workload.Replacement{Counts: []int32{5}}}
	whole := WholeAssignment(w, added)
	if got := whole.PodSets[0].Count; got != 5 {
		t.Errorf("count %d, want 5", got)
	}
	if got := whole.Usage[fr]; got != 10000 {
		t.Errorf("usage %d millicpu, want 10000", got)
	}
	adm := AdmissionOf("team", whole)
	if got := adm.PodSetAssignments[0].ResourceUsage.Cpu().String(); got != "10" || *adm.PodSetAssignments[0].Count != 5 {
		t.Errorf("admission %s cpu for %d pods, want 10 for 5", got, *adm.PodSetAssignments[0].Count)
	}
	if added.PodSets[0].Count != 2 || added.Usage[fr] != 4000 {
		t.Error("the decision's assignment was modified")
	}
	plain := &workload.Info{Shape: shape}
	if WholeAssignment(plain, added) != added {
		t.Error("a workload that replaces nothing must keep its assignment")
	}
}

// A growing slice refused for quota parks nothing: a plain workload of the
// same shape may fit on another flavor.
func TestGrowingSliceRefusalParksNothing(t *testing.T) {
	shape := workload.NewShape([]workload.PodSetShape{{Name: "main", Count: 1,
		PerPod: resources.Requests{corev1.ResourceCPU: 1000, corev1.ResourcePods: resources.One}}})
	plain := Decision{Workload: &workload.Info{Shape: shape}, Reason: WaitingForQuota}
	if got := plain.Parking(kueue.BestEffortFIFO); got != ParkShape {
		t.Fatalf("a plain workload's refusal parks %v, want its shape", got)
	}
	growing := Decision{Workload: &workload.Info{Shape: shape, Replaces: &workload.Replacement{Counts: []int32{3}}}, Reason: WaitingForQuota}
	if got := growing.Parking(kueue.BestEffortFIFO); got != ParkNothing {
		t.Fatalf("a growing slice's refusal parks %v, want nothing", got)
	}
}
