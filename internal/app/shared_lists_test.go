package app

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

func decodedWorkload(t *testing.T, data []byte) *kueue.Workload {
	t.Helper()
	wl := &kueue.Workload{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, wl); err != nil {
		t.Fatal(err)
	}
	return wl
}

func sameMap(a, b corev1.ResourceList) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// Two pending Workloads of one shape share their decoded resource lists in
// the cache, and keep them equal to what the API server sent.
func TestCachedWorkloadsShareEqualResourceLists(t *testing.T) {
	tr := newTrimmer()
	data := benchWorkloadJSON(false)
	a, _ := tr.workload(decodedWorkload(t, data))
	b, _ := tr.workload(decodedWorkload(t, data))
	wa, wb := a.(*kueue.Workload), b.(*kueue.Workload)
	ra := wa.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests
	rb := wb.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests
	if !sameMap(ra, rb) || !sameMap(wa.Status.ResourceRequests[0].Resources, wb.Status.ResourceRequests[0].Resources) {
		t.Fatal("equal resource lists of two cached Workloads are not shared")
	}
	if want := decodedWorkload(t, data).Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests; !reflect.DeepEqual(ra, want) {
		t.Fatalf("shared requests %v, want %v as decoded", ra, want)
	}
}

// Lists of equal value written differently are not shared: a reader
// comparing a cached Workload with its job sees the form it was sent in.
func TestSharedListsKeepTheDecodedForm(t *testing.T) {
	s := newSharedLists()
	one := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	milli := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")}
	if got := s.share(one); !sameMap(got, one) {
		t.Fatal("the first list of a content is not the one handed out")
	}
	if got := s.share(milli); !reflect.DeepEqual(got, milli) {
		t.Fatalf("share(1000m) = %v, want the list as decoded", got)
	}
	again := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if got := s.share(again); !sameMap(got, one) {
		t.Fatal("an equal list is not shared")
	}
}

// The table stops growing at maxSharedLists; later lists stay as decoded.
func TestSharedListsAreBounded(t *testing.T) {
	s := newSharedLists()
	for i := range maxSharedLists + 10 {
		s.share(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(i + 1))})
	}
	if len(s.seen) != maxSharedLists {
		t.Fatalf("%d lists kept, want at most %d", len(s.seen), maxSharedLists)
	}
	late := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprint(maxSharedLists + 5))}
	if got := s.share(late); !sameMap(got, late) {
		t.Fatal("a list past the bound is not returned as it is")
	}
}
