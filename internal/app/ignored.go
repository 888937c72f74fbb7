package app

import (
	ctrl "sigs.k8s.io/controller-runtime"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
)

// ignoredSettings lists the Configuration settings that change what Kueue
// does but that Kuota does not carry out yet, by field path. The manager
// starts anyway (a Kueue Configuration must load unchanged) and says so in
// its log, so that no setting is dropped without a word.
func ignoredSettings(cfg *configapi.Configuration) []string {
	var out []string
	if len(cfg.Metrics.CustomLabels) > 0 {
		out = append(out, "metrics.customLabels (metrics carry Kueue's standard labels only)")
	}
	if r := cfg.Resources; r != nil {
		for _, m := range r.DeviceClassMappings {
			if len(m.Sources) > 0 {
				out = append(out, "resources.deviceClassMappings[].sources (devices of "+string(m.Name)+" are not charged by counter or capacity)")
			}
		}
	}
	if mk := cfg.MultiKueue; mk != nil {
		if len(mk.ExternalFrameworks) > 0 {
			out = append(out, "multiKueue.externalFrameworks (MultiKueue runs the built-in kinds only)")
		}
		if mk.ClusterProfile != nil {
			out = append(out, "multiKueue.clusterProfile (MultiKueueClusters connect through kubeconfigs only)")
		}
	}
	return out
}

// logIgnoredSettings writes one log line per ignored setting.
func logIgnoredSettings(cfg *configapi.Configuration) {
	log := ctrl.Log.WithName("setup")
	for _, s := range ignoredSettings(cfg) {
		log.Info("The Configuration sets something Kuota does not do yet; it is ignored", "setting", s)
	}
}
