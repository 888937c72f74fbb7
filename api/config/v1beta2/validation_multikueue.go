package v1beta2

import (
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

var execInteractiveModes = []clientcmdapi.ExecInteractiveMode{
	clientcmdapi.NeverExecInteractiveMode,
	clientcmdapi.IfAvailableExecInteractiveMode,
	clientcmdapi.AlwaysExecInteractiveMode,
}

func validateMultiKueue(cfg *Configuration) field.ErrorList {
	mk := cfg.MultiKueue
	if mk == nil {
		return nil
	}
	errs := nonNegativeDuration(mk.GCInterval, multiKueuePath.Child("gcInterval"))
	errs = append(errs, nonNegativeDuration(mk.WorkerLostTimeout, multiKueuePath.Child("workerLostTimeout"))...)
	if mk.Origin != nil {
		for _, msg := range content.IsLabelValue(*mk.Origin) {
			errs = append(errs, field.Invalid(multiKueuePath.Child("origin"), *mk.Origin, msg))
		}
	}
	errs = append(errs, validateMultiKueueExternalFrameworks(cfg)...)
	errs = append(errs, validateClusterProfile(mk.ClusterProfile)...)
	if idc := mk.IncrementalDispatcherConfig; idc != nil {
		p := multiKueuePath.Child("incrementalDispatcherConfig")
		if ptr.Deref(mk.DispatcherName, "") != MultiKueueDispatcherModeIncremental {
			errs = append(errs, field.Forbidden(p,
				"may only be set when dispatcherName is "+MultiKueueDispatcherModeIncremental))
		}
		if idc.StepSize != nil && *idc.StepSize < 1 {
			errs = append(errs, field.Invalid(p.Child("stepSize"), *idc.StepSize, "must be greater than or equal to 1"))
		}
	}
	return errs
}

func validateMultiKueueExternalFrameworks(cfg *Configuration) field.ErrorList {
	var errs field.ErrorList
	p := multiKueuePath.Child("externalFrameworks")
	adapters := enabledFrameworkKinds(cfg, true)
	seen := map[schema.GroupKind]bool{}
	for i, fw := range cfg.MultiKueue.ExternalFrameworks {
		namePath := p.Index(i).Child("name")
		k, ok := ParseExternalFramework(fw.Name)
		if !ok {
			errs = append(errs, field.Invalid(namePath, fw.Name, "must be in the form Kind.version.group"))
			continue
		}
		gk := k.GroupKind()
		if seen[gk] {
			errs = append(errs, field.Duplicate(namePath, fw.Name))
		}
		seen[gk] = true
		if owner, builtIn := adapters[gk]; builtIn {
			errs = append(errs, field.Invalid(namePath, fw.Name,
				"conflicts with the built-in MultiKueue adapter of framework "+owner))
		}
	}
	return errs
}

func validateClusterProfile(cp *ClusterProfile) field.ErrorList {
	if cp == nil {
		return nil
	}
	p := multiKueuePath.Child("clusterProfile")
	var errs field.ErrorList
	//nolint:staticcheck // the deprecated field is still read and checked.
	credentials := cp.CredentialsProviders
	if len(cp.AccessProviders) > 0 && len(credentials) > 0 {
		errs = append(errs, field.Forbidden(p.Child("credentialsProviders"), "may not be set together with accessProviders"))
	}
	errs = append(errs, validateAccessProviders(cp.AccessProviders, p.Child("accessProviders"))...)
	return append(errs, validateAccessProviders(credentials, p.Child("credentialsProviders"))...)
}

func validateAccessProviders(providers []ClusterProfileAccessProvider, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, provider := range providers {
		pp := p.Index(i)
		if provider.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "must be set"))
		}
		exec := provider.ExecConfig
		ep := pp.Child("execConfig")
		if exec.Command == "" {
			errs = append(errs, field.Required(ep.Child("command"), "must be set"))
		}
		if exec.APIVersion == "" {
			errs = append(errs, field.Required(ep.Child("apiVersion"), "must be set"))
		}
		for j, env := range exec.Env {
			if env.Name == "" {
				errs = append(errs, field.Required(ep.Child("env").Index(j).Child("name"), "must be set"))
			}
		}
		switch exec.InteractiveMode {
		case "":
			errs = append(errs, field.Required(ep.Child("interactiveMode"), "must be set"))
		case clientcmdapi.NeverExecInteractiveMode, clientcmdapi.IfAvailableExecInteractiveMode,
			clientcmdapi.AlwaysExecInteractiveMode:
		default:
			errs = append(errs, field.NotSupported(ep.Child("interactiveMode"), exec.InteractiveMode, execInteractiveModes))
		}
	}
	return errs
}
