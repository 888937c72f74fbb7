// Package deployment queues the pods of Deployments, one Workload per pod
// as Kueue does for serving: its webhook marks the pod template of a
// Deployment that names a LocalQueue (pod-suspending-parent, the managed
// label, the queue name and priority class), so that the pod integration
// gates each pod the ReplicaSets create. A rollout or a scale-up waits for
// quota; a pod deleted by a scale-down gives its quota back once gone.
package deployment

import (
	"context"
	"fmt"
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FrameworkName is the name in integrations.frameworks.
const FrameworkName = "deployment"

// GVK is the kind this package handles.
var GVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

// Integration registers Deployments. Their pods are the pod integration's.
var Integration = jobframework.Integration{
	Name:         FrameworkName,
	GVK:          GVK,
	SetupWebhook: setupWebhook,
	Requires:     []string{jobframework.PodFrameworkName},
}

// +kubebuilder:webhook:path=/mutate-apps-v1-deployment,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=mdeployment.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-v1-deployment,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps,resources=deployments,verbs=create;update,versions=v1,name=vdeployment.kb.io,admissionReviewVersions=v1

// Webhook marks the pod template of managed Deployments and checks their
// labels.
type Webhook struct {
	Client  client.Reader
	Options jobframework.Options
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, Options: opts}
	return ctrl.NewWebhookManagedBy(mgr, &appsv1.Deployment{}).WithDefaulter(w).WithValidator(w).Complete()
}

var (
	_ admission.Defaulter[*appsv1.Deployment] = (*Webhook)(nil)
	_ admission.Validator[*appsv1.Deployment] = (*Webhook)(nil)
)

// Default sends a Deployment without a queue name to the namespace's
// "default" LocalQueue when there is one, and marks the pod template of a
// managed one.
func (w *Webhook) Default(ctx context.Context, d *appsv1.Deployment) error {
	managed, err := jobframework.DefaultParent(ctx, w.Client, w.Options, d)
	if err != nil || !managed {
		return err
	}
	jobframework.MarkParentTemplate(&d.Spec.Template, d, FrameworkName)
	return nil
}

var queuePath = field.NewPath("metadata", "labels").Key(jobframework.QueueNameLabel)

// ValidateCreate checks the Kuota labels.
func (w *Webhook) ValidateCreate(_ context.Context, d *appsv1.Deployment) (admission.Warnings, error) {
	errs := jobframework.ValidateLabels(d)
	errs = append(errs, validateTopology(nil, d)...)
	return nil, result(d, errs)
}

// ValidateUpdate checks the Kuota labels; the queue name cannot be removed,
// nor changed once pods are ready (they were admitted through it).
func (w *Webhook) ValidateUpdate(_ context.Context, oldD, newD *appsv1.Deployment) (admission.Warnings, error) {
	errs := jobframework.ValidateLabels(newD)
	oldQ, newQ := jobframework.QueueName(oldD), jobframework.QueueName(newD)
	if oldQ != newQ && oldQ != "" && (newQ == "" || oldD.Status.ReadyReplicas > 0) {
		errs = append(errs, field.Forbidden(queuePath, fmt.Sprintf("cannot change from %q while the Deployment's pods are admitted", oldQ)))
	}
	errs = append(errs, jobframework.ValidatePriorityClassChange(oldD, newD)...)
	errs = append(errs, validateTopology(oldD, newD)...)
	return nil, result(newD, errs)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *appsv1.Deployment) (admission.Warnings, error) {
	return nil, nil
}

var templateAnnotationsPath = field.NewPath("spec", "template", "metadata", "annotations")

// validateTopology checks the template's topology annotations for PodSets
// of one pod (each pod is its own Workload); on update only when they
// changed.
func validateTopology(oldD, newD *appsv1.Deployment) field.ErrorList {
	a := jobframework.TopologyAnnotations(newD.Spec.Template.Annotations)
	if a == nil || (oldD != nil && maps.Equal(jobframework.TopologyAnnotations(oldD.Spec.Template.Annotations), a)) {
		return nil
	}
	return jobframework.ValidateTopologyAnnotations(a, 1, templateAnnotationsPath)
}

func result(d *appsv1.Deployment, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(GVK.GroupKind(), d.Name, errs)
}
