// Package webhook serves the admission webhooks of Kuota's own kinds:
// ResourceFlavor and ClusterQueue get the resource-in-use finalizer when
// they are created, and ResourceFlavor, ClusterQueue, Cohort and Workload
// (spec and status) are validated. The webhooks are thin: the checks live in
// internal/validation, and errors come back as an Invalid status whose
// causes name the fields.
//
// The +kubebuilder:webhook markers in this package describe the webhook
// configurations; controller-gen turns them into config/webhook. The paths
// are controller-runtime's defaults for each kind.
package webhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Setup registers every webhook of this package with the manager's webhook
// server. The manager's scheme must hold Kuota's API types.
func Setup(mgr ctrl.Manager) error {
	for _, setup := range []func(ctrl.Manager) error{
		setupResourceFlavor, setupClusterQueue, setupCohort, setupWorkload,
	} {
		if err := setup(mgr); err != nil {
			return err
		}
	}
	return nil
}

// finalizerDefaulter adds the resource-in-use finalizer to an object that
// is not being deleted. The controllers add it too, as a fallback, and
// remove it once nothing uses the object.
type finalizerDefaulter[T client.Object] struct{}

var (
	_ admission.Defaulter[*kueue.ResourceFlavor] = finalizerDefaulter[*kueue.ResourceFlavor]{}
	_ admission.Defaulter[*kueue.ClusterQueue]   = finalizerDefaulter[*kueue.ClusterQueue]{}
)

// Default adds the finalizer.
func (finalizerDefaulter[T]) Default(_ context.Context, obj T) error {
	if obj.GetDeletionTimestamp().IsZero() {
		controllerutil.AddFinalizer(obj, kueue.ResourceInUseFinalizerName)
	}
	return nil
}

// validator adapts a pair of pure validation functions to a webhook
// validator. Deletes are always allowed.
type validator[T client.Object] struct {
	kind   string
	create func(T) field.ErrorList
	update func(oldObj, newObj T) field.ErrorList
}

// ValidateCreate checks an object being created.
func (v validator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return nil, v.invalid(obj, v.create(obj))
}

// ValidateUpdate checks an update of an object.
func (v validator[T]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	return nil, v.invalid(newObj, v.update(oldObj, newObj))
}

// ValidateDelete allows every delete; finalizers guard what is in use.
func (v validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns validation errors into an Invalid API error naming each
// field, or nil when there are none.
func (v validator[T]) invalid(obj T, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(kueue.GroupVersion.WithKind(v.kind).GroupKind(), obj.GetName(), errs)
}

// wrap names the kind in a setup error.
func wrap(kind string, err error) error {
	if err != nil {
		return fmt.Errorf("setting up the %s webhooks: %w", kind, err)
	}
	return nil
}
