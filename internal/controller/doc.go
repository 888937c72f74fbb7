// Package controller holds what the per-kind controllers share. Each Kueue
// kind has its own package under it; they observe objects, feed the cache
// (internal/cache) and write status, and never decide admissions.
package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// EnsureFinalizer adds the resource-in-use finalizer to a live object that
// lacks it. It reports whether it wrote.
func EnsureFinalizer(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if !obj.GetDeletionTimestamp().IsZero() || controllerutil.ContainsFinalizer(obj, kueue.ResourceInUseFinalizerName) {
		return false, nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	controllerutil.AddFinalizer(obj, kueue.ResourceInUseFinalizerName)
	return true, c.Patch(ctx, obj, patch)
}

// DropFinalizer removes the resource-in-use finalizer from an object being
// deleted.
func DropFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	if !controllerutil.ContainsFinalizer(obj, kueue.ResourceInUseFinalizerName) {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	controllerutil.RemoveFinalizer(obj, kueue.ResourceInUseFinalizerName)
	return c.Patch(ctx, obj, patch)
}
