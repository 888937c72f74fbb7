package lifecycle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

func sliceOf(name string, count int32, admitted *int32) *kueue.Workload {
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: count, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}},
	}
	if admitted != nil {
		wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: admitted,
			Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "spot"}}}}
	}
	return wl
}

func TestReplacedSlice(t *testing.T) {
	wl := sliceOf("next", 4, nil)
	if _, ok := ReplacedSlice(wl); ok {
		t.Error("a Workload without the annotation replaces nothing")
	}
	for value, want := range map[string]bool{"ns/old": true, "other/old": false, "old": false, "ns/": false} {
		wl.Annotations = map[string]string{kueue.WorkloadSliceReplacementForAnnotation: value}
		if key, ok := ReplacedSlice(wl); ok != want || ok && key.Name != "old" {
			t.Errorf("%q: %v %v", value, key, ok)
		}
	}
}

// A growing slice asks for the pods it adds, pinned to the replaced
// slice's flavors; slices that do not combine keep their whole request.
func TestAsReplacement(t *testing.T) {
	next := sliceOf("next", 5, nil)
	info := &workload.Info{}
	if !AsReplacement(info, next, sliceOf("old", 2, ptr.To[int32](2)), &View{}, &Options{}) {
		t.Fatal("a slice growing from 2 to 5 pods must combine")
	}
	if got := info.Shape.PodSets[0].Count; got != 3 {
		t.Errorf("asks for %d pods, want 3", got)
	}
	if info.Replaces.Counts[0] != 5 || info.Replaces.Flavors[0][corev1.ResourceCPU] != "spot" || info.Replaces.Key.Name != "old" {
		t.Errorf("replacement %+v", info.Replaces)
	}

	shrunk := sliceOf("old", 6, ptr.To[int32](6))
	placed := sliceOf("old", 2, ptr.To[int32](2))
	placed.Status.Admission.PodSetAssignments[0].TopologyAssignment = &kueue.TopologyAssignment{}
	for name, old := range map[string]*kueue.Workload{"more pods than the slice": shrunk, "placed by topology": placed,
		"not admitted": sliceOf("old", 2, nil)} {
		info := &workload.Info{}
		if AsReplacement(info, next, old, &View{}, &Options{}) || info.Replaces != nil || info.Shape != nil {
			t.Errorf("%s: combined (%+v)", name, info)
		}
	}
}
