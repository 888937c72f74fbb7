package settings

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

func TestDeviceClassMappingsBecomeWorkloadOptions(t *testing.T) {
	cfg := &configapi.Configuration{Resources: &configapi.Resources{DeviceClassMappings: []configapi.DeviceClassMapping{
		{Name: "example.com/gpu", DeviceClassNames: []corev1.ResourceName{"gpu.example.com", "big-gpu.example.com"}},
		{Name: "example.com/mig", DeviceClassNames: []corev1.ResourceName{"mig.example.com"},
			Sources: []configapi.DeviceClassSourceConfig{{Counter: &configapi.DeviceClassCounterSource{}}}},
	}}}
	got := Workloads(cfg).DeviceClasses
	want := map[string]corev1.ResourceName{"gpu.example.com": "example.com/gpu", "big-gpu.example.com": "example.com/gpu", "mig.example.com": ""}
	if len(got) != len(want) {
		t.Fatalf("device classes %v, want %v", got, want)
	}
	for k, v := range want {
		if r, ok := got[k]; !ok || r != v {
			t.Errorf("class %s maps to %q (known %v), want %q", k, r, ok, v)
		}
	}
	cfg.FeatureGates = map[string]bool{"KueueDRAIntegration": false}
	if got := Workloads(cfg).DeviceClasses; got != nil {
		t.Errorf("with KueueDRAIntegration off claims are still charged: %v", got)
	}
}
