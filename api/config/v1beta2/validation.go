package v1beta2

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

const (
	msgNegative    = "must be greater than or equal to 0"
	msgNotPositive = "must be greater than 0"
)

var (
	integrationsPath      = field.NewPath("integrations")
	namespaceSelectorPath = field.NewPath("managedJobsNamespaceSelector")
	waitForPodsReadyPath  = field.NewPath("waitForPodsReady")
	multiKueuePath        = field.NewPath("multiKueue")
	fairSharingPath       = field.NewPath("fairSharing")
	afsPath               = field.NewPath("admissionFairSharing")
	certManagementPath    = field.NewPath("internalCertManagement")
	retentionPath         = field.NewPath("objectRetentionPolicies", "workloads")
	clientConnectionPath  = field.NewPath("clientConnection")
)

// Validate checks cfg against the rules of the configuration file and returns
// one error per invalid field, each naming the field path. It reads nothing
// but cfg. Validate is meant for a defaulted configuration, but it accepts
// unset optional fields.
func Validate(cfg *Configuration) field.ErrorList {
	if cfg == nil {
		return field.ErrorList{field.Required(field.NewPath(""), "configuration is nil")}
	}
	var errs field.ErrorList
	errs = append(errs, validateControllerManager(&cfg.ControllerManager)...)
	errs = append(errs, validateIntegrations(cfg)...)
	errs = append(errs, validateManagedJobsNamespaceSelector(cfg)...)
	errs = append(errs, validateInternalCertManagement(cfg.InternalCertManagement)...)
	errs = append(errs, validateWaitForPodsReady(cfg.WaitForPodsReady)...)
	errs = append(errs, validateClientConnection(cfg.ClientConnection)...)
	errs = append(errs, validateMultiKueue(cfg)...)
	errs = append(errs, validateFairSharing(cfg.FairSharing)...)
	errs = append(errs, validateAdmissionFairSharing(cfg.AdmissionFairSharing)...)
	errs = append(errs, validateResources(cfg.Resources)...)
	errs = append(errs, validateObjectRetentionPolicies(cfg.ObjectRetentionPolicies)...)
	errs = append(errs, validateVisibilityServer(cfg.VisibilityServer)...)
	return errs
}

// enabledFrameworkKinds returns the group-kinds of the enabled built-in
// frameworks; adapters selects the kinds of their MultiKueue adapters instead.
func enabledFrameworkKinds(cfg *Configuration, adapters bool) map[schema.GroupKind]string {
	kinds := map[schema.GroupKind]string{}
	if cfg.Integrations == nil {
		return kinds
	}
	for _, name := range cfg.Integrations.Frameworks {
		fw, ok := builtInFrameworks[name]
		if !ok {
			continue
		}
		gk := fw.gvk.GroupKind()
		if adapters {
			gk = fw.multiKueueKind
		}
		if gk.Kind != "" {
			kinds[gk] = name
		}
	}
	return kinds
}

func validateIntegrations(cfg *Configuration) field.ErrorList {
	in := cfg.Integrations
	if in == nil {
		return field.ErrorList{field.Required(integrationsPath, "must be set")}
	}
	fwPath := integrationsPath.Child("frameworks")
	var errs field.ErrorList
	if len(in.Frameworks) == 0 {
		errs = append(errs, field.Required(fwPath, "must list at least one framework"))
	}
	seen := map[string]bool{}
	for i, name := range in.Frameworks {
		switch {
		case !IsBuiltInFramework(name):
			errs = append(errs, field.NotSupported(fwPath.Index(i), name, BuiltInFrameworkNames()))
		case seen[name]:
			errs = append(errs, field.Duplicate(fwPath.Index(i), name))
		}
		seen[name] = true
	}
	managed := enabledFrameworkKinds(cfg, false)
	extPath := integrationsPath.Child("externalFrameworks")
	for i, s := range in.ExternalFrameworks {
		k, ok := ParseExternalFramework(s)
		if !ok {
			errs = append(errs, field.Invalid(extPath.Index(i), s, "must be in the form Kind.version.group"))
			continue
		}
		if _, dup := managed[k.GroupKind()]; dup {
			errs = append(errs, field.Duplicate(extPath.Index(i), s))
			continue
		}
		managed[k.GroupKind()] = s
	}
	if slices.Contains(in.Frameworks, PodFrameworkName) && cfg.ManagedJobsNamespaceSelector == nil {
		errs = append(errs, field.Required(namespaceSelectorPath, "must be set when the pod integration is enabled"))
	}
	return errs
}

func validateManagedJobsNamespaceSelector(cfg *Configuration) field.ErrorList {
	sel := cfg.ManagedJobsNamespaceSelector
	if sel == nil {
		return nil
	}
	errs := metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, namespaceSelectorPath)
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return errs
	}
	forbidden := []string{metav1.NamespaceSystem}
	if ns := ptr.Deref(cfg.Namespace, ""); ns != "" && ns != metav1.NamespaceSystem {
		forbidden = append(forbidden, ns)
	}
	shown := selector.String()
	if shown == "" {
		shown = "<matches every namespace>"
	}
	for _, ns := range forbidden {
		if selector.Matches(labels.Set{corev1.LabelMetadataName: ns}) {
			errs = append(errs, field.Invalid(namespaceSelectorPath, shown,
				fmt.Sprintf("must not match the %q namespace", ns)))
		}
	}
	return errs
}

func validateInternalCertManagement(icm *InternalCertManagement) field.ErrorList {
	if icm == nil || !ptr.Deref(icm.Enable, false) {
		return nil
	}
	var errs field.ErrorList
	if name := icm.WebhookServiceName; name != nil {
		for _, msg := range utilvalidation.IsDNS1035Label(*name) {
			errs = append(errs, field.Invalid(certManagementPath.Child("webhookServiceName"), *name, msg))
		}
	}
	if name := icm.WebhookSecretName; name != nil {
		for _, msg := range content.IsDNS1123Subdomain(*name) {
			errs = append(errs, field.Invalid(certManagementPath.Child("webhookSecretName"), *name, msg))
		}
	}
	return errs
}

func validateWaitForPodsReady(w *WaitForPodsReady) field.ErrorList {
	if w == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case w.Timeout.Duration < 0:
		errs = append(errs, field.Invalid(waitForPodsReadyPath.Child("timeout"), w.Timeout.Duration.String(), msgNegative))
	case w.Timeout.Duration == 0:
		errs = append(errs, field.Required(waitForPodsReadyPath.Child("timeout"), "must be greater than 0"))
	}
	errs = append(errs, nonNegativeDuration(w.RecoveryTimeout, waitForPodsReadyPath.Child("recoveryTimeout"))...)
	rs := w.RequeuingStrategy
	if rs == nil {
		return errs
	}
	rsPath := waitForPodsReadyPath.Child("requeuingStrategy")
	if rs.Timestamp != nil && *rs.Timestamp != EvictionTimestamp && *rs.Timestamp != CreationTimestamp {
		errs = append(errs, field.NotSupported(rsPath.Child("timestamp"), *rs.Timestamp,
			[]RequeuingTimestamp{EvictionTimestamp, CreationTimestamp}))
	}
	errs = append(errs, nonNegativeInt32(rs.BackoffLimitCount, rsPath.Child("backoffLimitCount"))...)
	errs = append(errs, nonNegativeInt32(rs.BackoffBaseSeconds, rsPath.Child("backoffBaseSeconds"))...)
	errs = append(errs, nonNegativeInt32(rs.BackoffMaxSeconds, rsPath.Child("backoffMaxSeconds"))...)
	return errs
}

func validateClientConnection(cc *ClientConnection) field.ErrorList {
	if cc == nil {
		return nil
	}
	return nonNegativeInt32(cc.Burst, clientConnectionPath.Child("burst"))
}

var validPreemptionStrategies = [][]PreemptionStrategy{
	{LessThanOrEqualToFinalShare},
	{LessThanInitialShare},
	{LessThanOrEqualToFinalShare, LessThanInitialShare},
}

func validateFairSharing(fs *FairSharing) field.ErrorList {
	if fs == nil {
		return nil
	}
	p := fairSharingPath.Child("preemptionStrategies")
	if len(fs.PreemptionStrategies) == 0 {
		return field.ErrorList{field.Required(p, "must list at least one strategy")}
	}
	allowed := make([]string, 0, len(validPreemptionStrategies))
	for _, set := range validPreemptionStrategies {
		if slices.Equal(set, fs.PreemptionStrategies) {
			return nil
		}
		allowed = append(allowed, joinStrategies(set))
	}
	return field.ErrorList{field.NotSupported(p, joinStrategies(fs.PreemptionStrategies), allowed)}
}

func joinStrategies(set []PreemptionStrategy) string {
	parts := make([]string, len(set))
	for i, s := range set {
		parts[i] = string(s)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func validateAdmissionFairSharing(afs *AdmissionFairSharing) field.ErrorList {
	if afs == nil {
		return nil
	}
	var errs field.ErrorList
	if afs.UsageHalfLifeTime.Duration < 0 {
		errs = append(errs, field.Invalid(afsPath.Child("usageHalfLifeTime"), afs.UsageHalfLifeTime.Duration.String(), msgNegative))
	}
	if afs.UsageSamplingInterval.Duration <= 0 {
		errs = append(errs, field.Invalid(afsPath.Child("usageSamplingInterval"), afs.UsageSamplingInterval.Duration.String(), msgNotPositive))
	}
	for _, name := range slices.Sorted(maps.Keys(afs.ResourceWeights)) {
		if w := afs.ResourceWeights[name]; !(w >= 0) {
			errs = append(errs, field.Invalid(afsPath.Child("resourceWeights").Key(string(name)), w, msgNegative))
		}
	}
	return errs
}

func validateObjectRetentionPolicies(orp *ObjectRetentionPolicies) field.ErrorList {
	if orp == nil || orp.Workloads == nil {
		return nil
	}
	errs := nonNegativeDuration(orp.Workloads.AfterFinished, retentionPath.Child("afterFinished"))
	return append(errs, nonNegativeDuration(orp.Workloads.AfterDeactivatedByKueue, retentionPath.Child("afterDeactivatedByKueue"))...)
}

func nonNegativeDuration(d *metav1.Duration, p *field.Path) field.ErrorList {
	if d != nil && d.Duration < 0 {
		return field.ErrorList{field.Invalid(p, d.Duration.String(), msgNegative)}
	}
	return nil
}

func positiveDuration(d time.Duration, p *field.Path) field.ErrorList {
	if d <= 0 {
		return field.ErrorList{field.Invalid(p, d.String(), msgNotPositive)}
	}
	return nil
}

func nonNegativeInt32(v *int32, p *field.Path) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(p, *v, msgNegative)}
	}
	return nil
}
