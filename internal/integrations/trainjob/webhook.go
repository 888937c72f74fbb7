package trainjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create,versions=v1alpha1,name=mtrainjob.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=vtrainjob.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=get
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch

// Integration registers TrainJobs.
var Integration = jobframework.Integration{
	Name:         FrameworkName,
	GVK:          GVK,
	NewJob:       New,
	AddToScheme:  addToScheme,
	SetupWebhook: setupWebhook,
}

// addToScheme registers the trainer's kinds as unstructured objects.
// controller-runtime's client and cache handle an unstructured object by
// its GVK alone, but its webhook builder asks the scheme about the kind
// (whether it needs a conversion webhook) and fails for a kind the scheme
// does not know.
func addToScheme(s *runtime.Scheme) error {
	for _, gvk := range []schema.GroupVersionKind{GVK, TrainingRuntimeGVK, ClusterTrainingRuntimeGVK} {
		s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
		s.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
	}
	return nil
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := NewWebhook(jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, opts)
	return jobframework.SetupWebhook(mgr, New(nil).Object().(*unstructured.Unstructured), w)
}

// NewWebhook is the TrainJob webhook reading through c.
func NewWebhook(c client.Reader, opts jobframework.Options) *jobframework.Webhook {
	in := jobframework.Integration{Name: FrameworkName, GVK: GVK, NewJob: New}
	return &jobframework.Webhook{Client: c, Integration: in, Options: opts, Validate: validate}
}

// validate checks the fields Kuota reads: their types, and for a queued
// TrainJob a runtime reference Kuota can follow and a positive node
// count.
func validate(_, job jobframework.Job) field.ErrorList {
	u := job.(*TrainJob).u
	var errs field.ErrorList
	if _, err := boolAt(u.Object, suspendPath); err != nil {
		errs = append(errs, field.Invalid(path(suspendPath), nested(u.Object, suspendPath), "must be a boolean"))
	}
	if n, ok, err := int32At(u.Object, numNodesPath); err != nil {
		errs = append(errs, field.Invalid(path(numNodesPath), nested(u.Object, numNodesPath), "must be a 32-bit integer"))
	} else if ok && n < 1 {
		errs = append(errs, field.Invalid(path(numNodesPath), n, "must be at least 1"))
	}
	var res corev1.ResourceRequirements
	if err := decodeAt(u.Object, resourcesPerNodePath, &res); err != nil {
		errs = append(errs, field.Invalid(path(resourcesPerNodePath), "", fmt.Sprintf("must be resource requirements: %v", err)))
	}
	errs = append(errs, validatePatches(u)...)
	if jobframework.QueueName(u) != "" {
		if _, _, err := runtimeRef(u); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), nested(u.Object, []string{"spec", "runtimeRef"}), err.Error()))
		}
	}
	return errs
}

// validatePatches checks that spec.runtimePatches is a list of entries,
// each with a manager.
func validatePatches(u *unstructured.Unstructured) field.ErrorList {
	patches, err := listAt(u.Object, runtimePatchesPath)
	if err != nil {
		return field.ErrorList{field.Invalid(path(runtimePatchesPath), "", err.Error())}
	}
	var errs field.ErrorList
	for i, p := range patches {
		if m, err := stringAt(p, patchManagerPath); err != nil || m == "" {
			errs = append(errs, field.Required(path(runtimePatchesPath).Index(i).Child("manager"), "must name the patch's manager"))
		}
	}
	return errs
}

// path turns an accessor path into a field path.
func path(p []string) *field.Path {
	return field.NewPath(p[0], p[1:]...)
}
