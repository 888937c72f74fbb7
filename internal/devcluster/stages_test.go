package devcluster

import (
	"strings"
	"testing"
	"time"
)

func TestStagesKeepPodsRunningUnlessAsked(t *testing.T) {
	s := Stages(0)
	for _, want := range []string{"kuota-pod-ready", "kuota-pod-run-for", `.metadata.annotations["kuota.dev/run-for"]`, "kuota-pod-delete", "kuota-node-heartbeat"} {
		if !strings.Contains(s, want) {
			t.Errorf("Stages(0) lacks %q", want)
		}
	}
	if strings.Contains(s, "kuota-pod-runtime") {
		t.Error("without a pod runtime, no stage may finish pods that did not ask")
	}
	s = Stages(1500 * time.Millisecond)
	if !strings.Contains(s, "kuota-pod-runtime") || !strings.Contains(s, "durationMilliseconds: 1500") ||
		!strings.Contains(s, "values: ['Always']") {
		t.Errorf("Stages(1.5s) lacks the runtime stage for pods not restarted Always:\n%s", s)
	}
}

func TestValidateRejectsNegativePodRuntime(t *testing.T) {
	o := DefaultOptions(t.TempDir(), t.TempDir(), noEnv)
	o.PodRuntime = -time.Second
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "pod runtime") {
		t.Errorf("Validate() = %v, want a pod runtime error", err)
	}
}
