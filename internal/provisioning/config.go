package provisioning

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ControllerName is the AdmissionCheck controllerName this check answers
// to.
const ControllerName = "kueue.x-k8s.io/provisioning-request"

// ConfigKind is the kind AdmissionCheck parameters must name.
const ConfigKind = "ProvisioningRequestConfig"

// Reasons of the AdmissionCheck Active condition.
const (
	ReasonActive           = "Active"
	ReasonBadParametersRef = "BadParametersRef"
	// ReasonNotServed says the API server does not serve
	// ProvisioningRequests (cluster-autoscaler's CRD is not installed).
	ReasonNotServed = "ProvisioningRequestNotServed"
)

// ParameterAnnotationPrefix marks a job's annotations that are passed to
// its ProvisioningRequests as parameters, overriding the config's.
const ParameterAnnotationPrefix = "provreq.kueue.x-k8s.io/"

// Activity is what the Active condition of an AdmissionCheck says.
type Activity struct {
	Active  bool
	Reason  string
	Message string
}

// ConfigName returns the ProvisioningRequestConfig the check's parameters
// name, or an Activity explaining why they name none.
func ConfigName(ac *kueue.AdmissionCheck) (string, *Activity) {
	p := ac.Spec.Parameters
	if p == nil {
		return "", &Activity{Reason: ReasonBadParametersRef,
			Message: "spec.parameters must name a ProvisioningRequestConfig (apiGroup kueue.x-k8s.io)"}
	}
	if p.APIGroup != kueue.GroupVersion.Group || !strings.EqualFold(p.Kind, ConfigKind) {
		return "", &Activity{Reason: ReasonBadParametersRef,
			Message: fmt.Sprintf("spec.parameters names %s %s/%s; it must be a %s of %s", p.Name, p.APIGroup, p.Kind, ConfigKind, kueue.GroupVersion.Group)}
	}
	return p.Name, nil
}

// CheckActivity says whether a check of this controller is active: its
// parameters name an existing ProvisioningRequestConfig (config, nil when
// not found) and ProvisioningRequests are served.
func CheckActivity(ac *kueue.AdmissionCheck, config *kueue.ProvisioningRequestConfig, served bool) Activity {
	name, bad := ConfigName(ac)
	if bad != nil {
		return *bad
	}
	if config == nil {
		return Activity{Reason: ReasonBadParametersRef, Message: fmt.Sprintf("ProvisioningRequestConfig %q not found", name)}
	}
	if !served {
		return Activity{Reason: ReasonNotServed,
			Message: "the API server does not serve autoscaling.x-k8s.io/v1 ProvisioningRequests: install cluster-autoscaler's CRD"}
	}
	return Activity{Active: true, Reason: ReasonActive, Message: "The admission check is active"}
}

// Retry is a config's retry strategy with its defaults filled in.
type Retry struct {
	Limit int32
	Base  time.Duration
	Max   time.Duration
}

// RetryOf returns the retry strategy of a config (3 retries, 60 s
// doubling, at most 1800 s, where unset).
func RetryOf(cfg *kueue.ProvisioningRequestConfigSpec) Retry {
	r := Retry{Limit: 3, Base: 60 * time.Second, Max: 1800 * time.Second}
	if s := cfg.RetryStrategy; s != nil {
		r.Limit = ptr.Deref(s.BackoffLimitCount, r.Limit)
		r.Base = time.Duration(ptr.Deref(s.BackoffBaseSeconds, 60)) * time.Second
		r.Max = time.Duration(ptr.Deref(s.BackoffMaxSeconds, 1800)) * time.Second
	}
	return r
}

// Delay is the wait before retry number n (from 1): the base doubled n-1
// times, at most Max.
func (r Retry) Delay(n int32) time.Duration {
	d := r.Base
	for i := int32(1); i < n && d < r.Max; i++ {
		d *= 2
	}
	return min(d, r.Max)
}
