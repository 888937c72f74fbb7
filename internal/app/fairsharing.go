package app

import (
	"time"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
)

// fairSharingParams returns admission fair sharing's parameters, or nil
// when it is off: the Configuration has no admissionFairSharing, or the
// AdmissionFairSharing feature gate is turned off (it is on by default).
func fairSharingParams(cfg *configapi.Configuration) *afs.Params {
	if cfg == nil || cfg.AdmissionFairSharing == nil {
		return nil
	}
	if on, set := cfg.FeatureGates["AdmissionFairSharing"]; set && !on {
		return nil
	}
	a := cfg.AdmissionFairSharing
	p := &afs.Params{HalfLife: a.UsageHalfLifeTime.Duration, Interval: a.UsageSamplingInterval.Duration, Weights: a.ResourceWeights}
	if p.Interval <= 0 {
		p.Interval = 5 * time.Minute
	}
	return p
}
