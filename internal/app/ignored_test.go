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
		Resources: &configapi.Resources{DeviceClassMappings: []configapi.DeviceClassMapping{
			{Name: "gpu", DeviceClassNames: []corev1.ResourceName{"gpu.example.com"}},
			{Name: "mig", DeviceClassNames: []corev1.ResourceName{"mig.example.com"},
				Sources: []configapi.DeviceClassSourceConfig{{Counter: &configapi.DeviceClassCounterSource{}}}}}},
	}
	cfg.Metrics.CustomLabels = []configapi.ControllerMetricsCustomLabel{{Name: "team"}}
	cfg.MultiKueue = &configapi.MultiKueue{ExternalFrameworks: []configapi.MultiKueueExternalFramework{{Name: "Foo.v1.example.com"}}}
	got := strings.Join(ignoredSettings(cfg), "\n")
	for _, want := range []string{"metrics.customLabels", "resources.deviceClassMappings[].sources (devices of mig", "multiKueue.externalFrameworks"} {
		if !strings.Contains(got, want) {
			t.Errorf("%s is not reported: %s", want, got)
		}
	}
	for _, done := range []string{"admissionFairSharing", "devices of gpu"} {
		if strings.Contains(got, done) {
			t.Errorf("%s is carried out, yet reported as ignored: %s", done, got)
		}
	}
}
