package runner

import (
	"os"
	"testing"
)

// The sampler calls onGrowth when the resident memory first passes its
// mark, and not again until it grows by a tenth.
func TestSamplerCallsOnGrowthOncePerStep(t *testing.T) {
	calls := 0
	s := &sampler{pid: os.Getpid(), onGrowth: func() { calls++ }}
	s.read()
	if calls != 1 || s.mark == 0 {
		t.Fatalf("first sample: %d calls, mark %d; want one call and a mark", calls, s.mark)
	}
	s.mark *= 2 // as if memory had shrunk to half of the last mark
	s.read()
	if calls != 1 {
		t.Fatalf("%d calls after a sample under the mark, want 1", calls)
	}
	s.mark /= 4 // as if memory had doubled since the last mark
	s.read()
	if calls != 2 {
		t.Fatalf("%d calls after growth past the mark, want 2", calls)
	}
}
