// Package controller holds what the per-kind controllers share. The cache
// is fed by informer handlers (internal/feed); the controllers under this
// package only act: they own finalizers (clusterqueue, resourceflavor,
// admissioncheck), carry out the Workload lifecycle (workload) and run the
// ProvisioningRequest admission check (provisioningrequest). They
// never decide admissions.
package controller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// EnsureFinalizer adds the resource-in-use finalizer to a live object that
// lacks it. The patch carries the object's resourceVersion, so it fails
// rather than overwrite a change it did not see. It reports whether it
// wrote.
func EnsureFinalizer(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if !obj.GetDeletionTimestamp().IsZero() || controllerutil.ContainsFinalizer(obj, kueue.ResourceInUseFinalizerName) {
		return false, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(obj, kueue.ResourceInUseFinalizerName)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return false, fmt.Errorf("adding finalizer to %s: %w", obj.GetName(), err)
	}
	return true, nil
}

// DropFinalizer removes the resource-in-use finalizer from an object being
// deleted, with the same optimistic lock.
func DropFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if !controllerutil.ContainsFinalizer(obj, kueue.ResourceInUseFinalizerName) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, kueue.ResourceInUseFinalizerName)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("removing finalizer from %s: %w", obj.GetName(), err)
	}
	return nil
}

// Outcome turns errors that resolve themselves into a quiet retry: a
// conflict is retried shortly on a fresh read (the controllers' predicates
// drop the status writes that cause most conflicts, so no event would
// bring the object back); NotFound means it is gone. Neither deserves a
// "Reconciler error" with a stack trace.
func Outcome(ctx context.Context, err error) (ctrl.Result, error) {
	switch {
	case err == nil:
		return ctrl.Result{}, nil
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(2).Info("object changed meanwhile; retrying on a fresh read", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// conflictRetry is how soon a write that lost a race is tried again.
const conflictRetry = 100 * time.Millisecond

// SpecOrLifecycle passes creations, deletions, and updates that change the
// spec (generation), the deletion timestamp or the finalizers: what the
// finalizer controllers act on. Status writes, Kuota's own included, do
// not wake them.
var SpecOrLifecycle = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld, e.ObjectNew
		return o.GetGeneration() != n.GetGeneration() || o.GetDeletionTimestamp().IsZero() != n.GetDeletionTimestamp().IsZero() ||
			len(o.GetFinalizers()) != len(n.GetFinalizers())
	},
}

// SetCheckActive writes an AdmissionCheck's Active condition, when it
// changes, with a status update carrying the object's resourceVersion.
func SetCheckActive(ctx context.Context, c client.Client, ac *kueue.AdmissionCheck, active bool, reason, message string) error {
	status := metav1.ConditionFalse
	if active {
		status = metav1.ConditionTrue
	}
	next := ac.DeepCopy()
	if !meta.SetStatusCondition(&next.Status.Conditions, metav1.Condition{Type: kueue.AdmissionCheckActive, Status: status,
		Reason: reason, Message: message, ObservedGeneration: ac.Generation}) {
		return nil
	}
	if err := c.Status().Update(ctx, next); err != nil {
		return fmt.Errorf("setting the Active condition of AdmissionCheck %s: %w", ac.Name, err)
	}
	return nil
}
