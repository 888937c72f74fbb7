package app

import (
	"fmt"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
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

// Pending Workloads of one template share their trimmed pod sets; where
// the pod templates' labels differ (a batch Job's carry its uid), they
// still share the trimmed containers.
func TestCachedWorkloadsShareEqualPodSetsAndContainers(t *testing.T) {
	tr := newTrimmer()
	data := benchWorkloadJSON(false)
	a, _ := tr.workload(decodedWorkload(t, data))
	b, _ := tr.workload(decodedWorkload(t, data))
	wa, wb := a.(*kueue.Workload), b.(*kueue.Workload)
	if &wa.Spec.PodSets[0] != &wb.Spec.PodSets[0] {
		t.Fatal("equal pod sets of two cached Workloads are not shared")
	}
	alone, _ := newTrimmer().workload(decodedWorkload(t, data))
	if !reflect.DeepEqual(wa.Spec.PodSets, alone.(*kueue.Workload).Spec.PodSets) {
		t.Fatalf("shared pod sets %+v, want %+v", wa.Spec.PodSets, alone.(*kueue.Workload).Spec.PodSets)
	}

	labelled := decodedWorkload(t, data)
	labelled.Spec.PodSets[0].Template.Labels = map[string]string{"batch.kubernetes.io/controller-uid": "u-1"}
	c, _ := tr.workload(labelled)
	wc := c.(*kueue.Workload)
	if &wc.Spec.PodSets[0] == &wa.Spec.PodSets[0] {
		t.Fatal("pod sets with different template labels are shared")
	}
	if wc.Spec.PodSets[0].Template.Labels["batch.kubernetes.io/controller-uid"] != "u-1" {
		t.Fatalf("template labels %v, want the Workload's own", wc.Spec.PodSets[0].Template.Labels)
	}
	if &wc.Spec.PodSets[0].Template.Spec.Containers[0] != &wa.Spec.PodSets[0].Template.Spec.Containers[0] {
		t.Fatal("equal trimmed containers of two cached Workloads are not shared")
	}

	other := decodedWorkload(t, data)
	other.Spec.PodSets[0].Count = 7
	d, _ := tr.workload(other)
	if got := d.(*kueue.Workload).Spec.PodSets[0].Count; got != 7 {
		t.Fatalf("count %d, want the Workload's own 7", got)
	}
}

// Equal label maps of pending Workloads are shared, but not a job's (its
// uid label makes it unique) nor a finished Workload's (trimFinished).
func TestCachedWorkloadsShareEqualLabels(t *testing.T) {
	tr := newTrimmer()
	data := benchWorkloadJSON(false)
	a, _ := tr.workload(decodedWorkload(t, data))
	b, _ := tr.workload(decodedWorkload(t, data))
	la, lb := a.(*kueue.Workload).Labels, b.(*kueue.Workload).Labels
	if reflect.ValueOf(la).UnsafePointer() != reflect.ValueOf(lb).UnsafePointer() {
		t.Fatal("equal labels of two cached Workloads are not shared")
	}
	if want := decodedWorkload(t, data).Labels; !reflect.DeepEqual(la, want) {
		t.Fatalf("shared labels %v, want %v", la, want)
	}
	job := decodedWorkload(t, data)
	job.Labels = map[string]string{jobframework.JobUIDLabel: "u-1"}
	tr.workload(job)
	if len(tr.labels.seen) != 1 {
		t.Fatalf("%d label maps kept, want only the first Workloads' (a job's uid label is never shared)", len(tr.labels.seen))
	}
}
