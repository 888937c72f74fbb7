package lifecycle

import (
	"slices"
	"testing"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// A workload with admission gates is kept out of its queue, reason
// AdmissionGated, until the last gate is removed.
func TestAdmissionGatesHoldTheWorkload(t *testing.T) {
	wl := newWL().wl
	wl.Annotations = map[string]string{kueue.AdmissionGatedByAnnotation: " example.com/b, example.com/a,,example.com/b "}
	if got := AdmissionGates(wl); !slices.Equal(got, []string{"example.com/a", "example.com/b"}) {
		t.Fatalf("gates %v, want example.com/a and example.com/b", got)
	}
	v := healthyView()
	if p := Place(wl, v); p != Aside {
		t.Errorf("gated workload placed %s, want Aside", p)
	}
	s := Next(wl, v, &Options{}, t0)
	want := "admission is gated by example.com/a, example.com/b (annotation kueue.x-k8s.io/admission-gated-by)"
	if s.Action != SetPending || s.Reason != kueue.WorkloadReasonAdmissionGated || s.Message != want || s.EventReason != kueue.WorkloadReasonAdmissionGated {
		t.Errorf("step %+v, want SetPending AdmissionGated %q", s, want)
	}
	wl.Annotations[kueue.AdmissionGatedByAnnotation] = " , "
	if p := Place(wl, v); p != Queued {
		t.Errorf("workload without gates left placed %s, want Queued", p)
	}
}
