package settings

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

func TestFairSharingParams(t *testing.T) {
	if AdmissionFairSharing(&configapi.Configuration{}) != nil {
		t.Error("no admissionFairSharing in the Configuration turns it on")
	}
	cfg := &configapi.Configuration{AdmissionFairSharing: &configapi.AdmissionFairSharing{
		UsageHalfLifeTime: metav1.Duration{Duration: time.Hour}, ResourceWeights: map[corev1.ResourceName]float64{corev1.ResourceCPU: 2}}}
	p := AdmissionFairSharing(cfg)
	if p == nil || p.HalfLife != time.Hour || p.Interval != 5*time.Minute || p.Weights[corev1.ResourceCPU] != 2 {
		t.Errorf("params %+v, want half-life 1h, interval 5m (the default), cpu weight 2", p)
	}
	cfg.FeatureGates = map[string]bool{"AdmissionFairSharing": false}
	if AdmissionFairSharing(cfg) != nil {
		t.Error("the AdmissionFairSharing gate turned off leaves it on")
	}
}
