package appwrapper

import (
	"fmt"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	awutils "github.com/project-codeflare/appwrapper/pkg/utils"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-workload-codeflare-dev-v1beta2-appwrapper,mutating=true,failurePolicy=fail,sideEffects=None,groups=workload.codeflare.dev,resources=appwrappers,verbs=create,versions=v1beta2,name=mappwrapper.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-workload-codeflare-dev-v1beta2-appwrapper,mutating=false,failurePolicy=fail,sideEffects=None,groups=workload.codeflare.dev,resources=appwrappers,verbs=create;update,versions=v1beta2,name=vappwrapper.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers/status,verbs=get
// +kubebuilder:rbac:groups=workload.codeflare.dev,resources=appwrappers/finalizers,verbs=get;update;patch

// Integration registers AppWrappers.
var Integration = jobframework.Integration{
	Name:         FrameworkName,
	GVK:          GVK,
	NewJob:       New,
	AddToScheme:  awv1beta2.AddToScheme,
	SetupWebhook: setupWebhook,
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &jobframework.Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()},
		Integration: jobframework.Integration{Name: FrameworkName, GVK: GVK, NewJob: New}, Options: opts, Validate: Validate}
	return jobframework.SetupWebhook(mgr, &awv1beta2.AppWrapper{}, w)
}

// MaxPodSets is the most pod sets a queued AppWrapper may have: a
// Workload holds at most 18 PodSets.
const MaxPodSets = 18

// Validate checks a queued AppWrapper (one with a queue name): each
// component's template is an object, each pod set's path leads to a pod
// template and its replicas are not negative, the AppWrapper has between
// 1 and MaxPodSets pod sets, and their names ("<name>-<i>") are valid
// PodSet names. While it runs (it was and stays unsuspended), its
// components cannot change. old is nil on create.
func Validate(old, job jobframework.Job) field.ErrorList {
	aw := job.(*AppWrapper).aw
	if jobframework.QueueName(aw) == "" {
		return nil
	}
	errs := validateComponents(aw)
	if old == nil || old.IsSuspended() || job.IsSuspended() {
		return errs
	}
	if !sameComponents(old.(*AppWrapper).aw.Spec.Components, aw.Spec.Components) {
		errs = append(errs, field.Forbidden(componentsPath,
			"the components' templates and pod sets cannot change while the AppWrapper runs: its Workload was admitted for the old ones; suspend the AppWrapper first"))
	}
	return errs
}

// validateComponents checks what PodSets needs, naming the field at
// fault.
func validateComponents(aw *awv1beta2.AppWrapper) field.ErrorList {
	var errs field.ErrorList
	count := 0
	for i := range aw.Spec.Components {
		comp := &aw.Spec.Components[i]
		path := componentsPath.Index(i)
		obj, err := decodeTemplate(comp)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("template"), "", err.Error()))
			continue
		}
		sets := comp.DeclaredPodSets
		if len(sets) == 0 {
			if sets, err = awutils.InferPodSets(obj); err != nil {
				errs = append(errs, field.Invalid(path.Child("podSets"), "", err.Error()))
				continue
			}
		}
		for k, ps := range comp.DeclaredPodSets {
			if ps.Replicas != nil && *ps.Replicas < 0 {
				errs = append(errs, field.Invalid(path.Child("podSets").Index(k).Child("replicas"), *ps.Replicas, "must not be negative"))
			}
			if _, err := awutils.GetPodTemplateSpec(obj, ps.Path); err != nil {
				errs = append(errs, field.Invalid(path.Child("podSets").Index(k).Child("path"), ps.Path, err.Error()))
			}
		}
		count += len(sets)
	}
	switch {
	case count == 0 && len(errs) == 0:
		errs = append(errs, field.Required(componentsPath, "a queued AppWrapper needs at least one component with a pod set"))
	case count > MaxPodSets:
		errs = append(errs, field.TooMany(componentsPath, count, MaxPodSets))
	}
	if count > 0 {
		last := string(PodSetName(aw.Name, count-1))
		for _, msg := range validation.IsDNS1123Label(last) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), aw.Name,
				fmt.Sprintf("the PodSet names are \"<name>-<index>\" and %q is not a valid one: %s", last, msg)))
		}
	}
	return errs
}
