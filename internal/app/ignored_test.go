package app

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

func TestIgnoredSettings(t *testing.T) {
	if got := ignoredSettings(&configapi.Configuration{}); len(got) != 0 {
		t.Errorf("a default Configuration ignores nothing: %v", got)
	}
	cfg := &configapi.Configuration{
		AdmissionFairSharing: &configapi.AdmissionFairSharing{},
		Resources:            &configapi.Resources{DeviceClassMappings: []configapi.DeviceClassMapping{{Name: "gpu", DeviceClassNames: []corev1.ResourceName{"gpu.example.com"}}}},
	}
	cfg.Metrics.CustomLabels = []configapi.ControllerMetricsCustomLabel{{Name: "team"}}
	got := strings.Join(ignoredSettings(cfg), "\n")
	for _, want := range []string{"metrics.customLabels", "resources.deviceClassMappings"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s is not reported: %s", want, got)
		}
	}
	if strings.Contains(got, "admissionFairSharing") {
		t.Errorf("admission fair sharing is carried out, yet reported as ignored: %s", got)
	}
}
