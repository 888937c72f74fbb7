// Package settings turns a Kueue Configuration into the options of
// Kuota's pure parts (the scheduling core, the workload lifecycle,
// admission fair sharing), so that the manager, the simulator and the
// explanations read a Configuration the same way.
package settings

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
)

// Workloads says how Workloads become scheduler records and how
// their lifecycle runs.
func Workloads(cfg *configapi.Configuration) lifecycle.Options {
	o := lifecycle.Options{RequeueAtEvictionTime: true}
	if on, set := cfg.FeatureGates["TASFailedNodeReplacement"]; !set || on {
		o.ReplaceFailedNodes = true
	}
	if r := cfg.Resources; r != nil {
		o.ExcludedResourcePrefixes = r.ExcludeResourcePrefixes
		o.Transformations = transformations(r.Transformations)
		if on, set := cfg.FeatureGates["KueueDRAIntegration"]; !set || on {
			o.DeviceClasses = deviceClasses(r.DeviceClassMappings)
		}
	}
	if p := cfg.ObjectRetentionPolicies; p != nil && p.Workloads != nil {
		o.Retention = lifecycle.Retention{AfterFinished: duration(p.Workloads.AfterFinished),
			AfterDeactivatedByKueue: duration(p.Workloads.AfterDeactivatedByKueue)}
	}
	if w := cfg.WaitForPodsReady; w != nil {
		o.PodsReady = podsReadyOptions(w)
		if rs := w.RequeuingStrategy; rs != nil && rs.Timestamp != nil {
			o.RequeueAtEvictionTime = *rs.Timestamp == configapi.EvictionTimestamp
		}
	}
	return o
}

// deviceClasses maps each DeviceClass of deviceClassMappings to its
// logical resource; a mapping that counts counters or capacity (sources)
// is not charged yet, its classes mapped to "" (known, not counted).
func deviceClasses(mappings []configapi.DeviceClassMapping) map[string]corev1.ResourceName {
	if len(mappings) == 0 {
		return nil
	}
	out := map[string]corev1.ResourceName{}
	for _, m := range mappings {
		for _, class := range m.DeviceClassNames {
			if len(m.Sources) > 0 {
				out[string(class)] = ""
				continue
			}
			out[string(class)] = m.Name
		}
	}
	return out
}

// podsReadyOptions converts waitForPodsReady (defaulted by the loader).
func podsReadyOptions(w *configapi.WaitForPodsReady) *lifecycle.PodsReadyOptions {
	o := &lifecycle.PodsReadyOptions{Timeout: w.Timeout.Duration, RecoveryTimeout: w.Timeout.Duration,
		Backoff: lifecycle.Backoff{Base: 60 * time.Second, Max: time.Hour}}
	if w.RecoveryTimeout != nil {
		o.RecoveryTimeout = w.RecoveryTimeout.Duration
	}
	if rs := w.RequeuingStrategy; rs != nil {
		o.Backoff.Limit = rs.BackoffLimitCount
		if rs.BackoffBaseSeconds != nil {
			o.Backoff.Base = time.Duration(*rs.BackoffBaseSeconds) * time.Second
		}
		if rs.BackoffMaxSeconds != nil {
			o.Backoff.Max = time.Duration(*rs.BackoffMaxSeconds) * time.Second
		}
	}
	return o
}

// Scheduling says how the scheduling core decides.
func Scheduling(cfg *configapi.Configuration, patience time.Duration) scheduling.Options {
	o := scheduling.Options{Patience: patience}
	if r := cfg.Resources; r != nil && r.QuotaCheckStrategy != nil {
		o.Flavors = flavors.Options{IgnoreUndeclared: *r.QuotaCheckStrategy == configapi.QuotaCheckIgnoreUndeclared}
	}
	if fs := cfg.FairSharing; fs != nil {
		o.FairSharing = &scheduling.FairSharing{}
		for _, s := range fs.PreemptionStrategies {
			o.FairSharing.Strategies = append(o.FairSharing.Strategies, preemption.Strategy(s))
		}
	}
	return o
}

// transformations converts the Configuration's resources.transformations
// (validated and defaulted by the loader). An output too large to be
// counted is resources.Max per unit: a pod that gets it fits no quota.
func transformations(in []configapi.ResourceTransformation) []resources.Transformation {
	var out []resources.Transformation
	for _, t := range in {
		outputs, _ := resources.FromResourceList(t.Outputs)
		out = append(out, resources.Transformation{Input: t.Input, MultiplyBy: t.MultiplyBy,
			Replace: ptr.Deref(t.Strategy, configapi.Retain) == configapi.Replace, Outputs: outputs})
	}
	return out
}

func duration(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}

// AdmissionFairSharing returns admission fair sharing's parameters, or nil
// when it is off: the Configuration has no admissionFairSharing, or the
// AdmissionFairSharing feature gate is turned off (it is on by default).
func AdmissionFairSharing(cfg *configapi.Configuration) *afs.Params {
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
