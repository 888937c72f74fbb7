package v1beta2

import (
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

const (
	maxCustomLabels                = 20
	maxCustomLabelsPerKind         = 6
	maxCustomLabelsForWorkload     = 2
	maxTrackedValues               = 16
	maxTrackedValuesForWorkload    = 12
	leaderElectionRenewJitterRatio = 1.2
)

var (
	leaderElectionPath = field.NewPath("leaderElection")
	tlsPath            = field.NewPath("tls")
	customLabelsPath   = field.NewPath("metrics", "customLabels")
	visibilityPath     = field.NewPath("visibilityServer")

	customLabelNamePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]*$`)

	// tlsVersions maps the accepted tls.minVersion names to their values.
	tlsVersions = map[string]uint16{
		"VersionTLS10": tls.VersionTLS10,
		"VersionTLS11": tls.VersionTLS11,
		"VersionTLS12": tls.VersionTLS12,
		"VersionTLS13": tls.VersionTLS13,
	}
)

func validateControllerManager(cm *ControllerManager) field.ErrorList {
	errs := validateLeaderElection(cm.LeaderElection)
	errs = append(errs, validateTLS(cm.TLS)...)
	errs = append(errs, validateCustomLabels(cm.Metrics.CustomLabels)...)
	if lq := cm.Metrics.LocalQueueMetrics; lq != nil && lq.LocalQueueSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(lq.LocalQueueSelector,
			metav1validation.LabelSelectorValidationOptions{},
			field.NewPath("metrics", "localQueueMetrics", "localQueueSelector"))...)
	}
	return errs
}

func validateLeaderElection(le *configv1alpha1.LeaderElectionConfiguration) field.ErrorList {
	if le == nil || !ptr.Deref(le.LeaderElect, false) {
		return nil
	}
	lease, renew, retry := le.LeaseDuration.Duration, le.RenewDeadline.Duration, le.RetryPeriod.Duration
	errs := positiveDuration(lease, leaderElectionPath.Child("leaseDuration"))
	errs = append(errs, positiveDuration(renew, leaderElectionPath.Child("renewDeadline"))...)
	errs = append(errs, positiveDuration(retry, leaderElectionPath.Child("retryPeriod"))...)
	if len(errs) > 0 {
		return errs
	}
	if lease <= renew {
		errs = append(errs, field.Invalid(leaderElectionPath.Child("leaseDuration"), lease.String(),
			"must be greater than renewDeadline"))
	}
	if float64(renew) <= leaderElectionRenewJitterRatio*float64(retry) {
		errs = append(errs, field.Invalid(leaderElectionPath.Child("renewDeadline"), renew.String(),
			fmt.Sprintf("must be greater than %.1f times retryPeriod (%s)", leaderElectionRenewJitterRatio, retry)))
	}
	return errs
}

func validateTLS(opts *TLSOptions) field.ErrorList {
	if opts == nil {
		return nil
	}
	var errs field.ErrorList
	if opts.MinVersion != "" {
		if _, ok := tlsVersions[opts.MinVersion]; !ok {
			errs = append(errs, field.NotSupported(tlsPath.Child("minVersion"), opts.MinVersion,
				slices.Sorted(maps.Keys(tlsVersions))))
		}
	}
	if opts.MinVersion == "VersionTLS13" && len(opts.CipherSuites) > 0 {
		errs = append(errs, field.Forbidden(tlsPath.Child("cipherSuites"),
			"may not be set when minVersion is VersionTLS13 (TLS 1.3 cipher suites are not configurable)"))
	}
	known := knownCipherSuites()
	for i, name := range opts.CipherSuites {
		if !known[name] {
			errs = append(errs, field.Invalid(tlsPath.Child("cipherSuites").Index(i), name,
				"unknown cipher suite; use a name from Go's crypto/tls"))
		}
	}
	for i, id := range opts.CurvePreferences {
		if !isKnownCurve(id) {
			errs = append(errs, field.Invalid(tlsPath.Child("curvePreferences").Index(i), id,
				"unknown key-exchange group ID"))
		}
	}
	return errs
}

func knownCipherSuites() map[string]bool {
	known := map[string]bool{}
	for _, cs := range tls.CipherSuites() {
		known[cs.Name] = true
	}
	for _, cs := range tls.InsecureCipherSuites() {
		known[cs.Name] = true
	}
	return known
}

// isKnownCurve reports whether crypto/tls has a name for the group ID; the
// generated String method falls back to "CurveID(n)" for unknown IDs.
func isKnownCurve(id int32) bool {
	if id <= 0 || id > 0xFFFF {
		return false
	}
	return !strings.HasPrefix(tls.CurveID(id).String(), "CurveID(")
}

func validateCustomLabels(entries []ControllerMetricsCustomLabel) field.ErrorList {
	if len(entries) == 0 {
		return nil
	}
	var errs field.ErrorList
	if len(entries) > maxCustomLabels {
		errs = append(errs, field.TooMany(customLabelsPath, len(entries), maxCustomLabels))
	}
	names := map[string]bool{}
	perKind := map[CustomLabelSourceKind]int{}
	for i, entry := range entries {
		p := customLabelsPath.Index(i)
		errs = append(errs, validateCustomLabel(entry, p)...)
		if names[entry.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), entry.Name))
		}
		names[entry.Name] = true
		kind := ptr.Deref(entry.SourceKind, DefaultCustomLabelSourceKind)
		perKind[kind]++
		if limit := customLabelLimit(kind); limit > 0 && perKind[kind] == limit+1 {
			errs = append(errs, field.Invalid(p.Child("sourceKind"), kind,
				fmt.Sprintf("at most %d custom labels may use this source kind", limit)))
		}
	}
	return errs
}

// customLabelLimit returns the number of custom labels allowed for a source
// kind, or 0 for an unknown kind.
func customLabelLimit(kind CustomLabelSourceKind) int {
	switch kind {
	case SourceKindWorkload:
		return maxCustomLabelsForWorkload
	case SourceKindClusterQueue, SourceKindLocalQueue, SourceKindCohort:
		return maxCustomLabelsPerKind
	default:
		return 0
	}
}

func validateCustomLabel(entry ControllerMetricsCustomLabel, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !customLabelNamePattern.MatchString(entry.Name) {
		errs = append(errs, field.Invalid(p.Child("name"), entry.Name, "must match "+customLabelNamePattern.String()))
	}
	switch {
	case entry.SourceLabelKey != "" && entry.SourceAnnotationKey != "":
		errs = append(errs, field.Forbidden(p.Child("sourceAnnotationKey"), "may not be set together with sourceLabelKey"))
	case entry.SourceLabelKey != "":
		errs = append(errs, labelKeyErrors(entry.SourceLabelKey, p.Child("sourceLabelKey"))...)
	case entry.SourceAnnotationKey != "":
		errs = append(errs, labelKeyErrors(entry.SourceAnnotationKey, p.Child("sourceAnnotationKey"))...)
	case customLabelNamePattern.MatchString(entry.Name):
		errs = append(errs, labelKeyErrors(entry.Name, p.Child("name"))...)
	}
	kind := ptr.Deref(entry.SourceKind, DefaultCustomLabelSourceKind)
	tv := p.Child("trackedValues")
	switch {
	case customLabelLimit(kind) == 0:
		errs = append(errs, field.NotSupported(p.Child("sourceKind"), kind, []CustomLabelSourceKind{
			SourceKindClusterQueue, SourceKindLocalQueue, SourceKindCohort, SourceKindWorkload}))
	case kind == SourceKindWorkload && len(entry.TrackedValues) == 0:
		errs = append(errs, field.Required(tv, "must list 1 to 12 values when sourceKind is Workload"))
	case kind == SourceKindWorkload && len(entry.TrackedValues) > maxTrackedValuesForWorkload:
		errs = append(errs, field.TooMany(tv, len(entry.TrackedValues), maxTrackedValuesForWorkload))
	case len(entry.TrackedValues) > maxTrackedValues:
		errs = append(errs, field.TooMany(tv, len(entry.TrackedValues), maxTrackedValues))
	}
	seen := map[string]bool{}
	for i, v := range entry.TrackedValues {
		if seen[v] {
			errs = append(errs, field.Duplicate(tv.Index(i), v))
		}
		seen[v] = true
	}
	return errs
}

func labelKeyErrors(key string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range content.IsLabelKey(key) {
		errs = append(errs, field.Invalid(p, key, msg))
	}
	return errs
}

func validateVisibilityServer(vs *VisibilityServerConfiguration) field.ErrorList {
	if vs == nil {
		return nil
	}
	var errs field.ErrorList
	if vs.BindAddress != nil && net.ParseIP(*vs.BindAddress) == nil {
		errs = append(errs, field.Invalid(visibilityPath.Child("bindAddress"), *vs.BindAddress, "must be an IP address"))
	}
	if vs.BindPort != nil && (*vs.BindPort < 1 || *vs.BindPort > 65535) {
		errs = append(errs, field.Invalid(visibilityPath.Child("bindPort"), *vs.BindPort, "must be between 1 and 65535"))
	}
	return errs
}
