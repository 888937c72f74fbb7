package jobframework

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LiveFallback reads from the cache and, when the cache has not seen an
// object yet, from the API server. Webhooks need it: a namespace or a
// LocalQueue created a moment before the job may not be cached yet.
type LiveFallback struct {
	Cached client.Reader
	Live   client.Reader
}

var _ client.Reader = LiveFallback{}

// Get reads key from the cache, then from the API server on NotFound.
func (r LiveFallback) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := r.Cached.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) && r.Live != nil {
		return r.Live.Get(ctx, key, obj, opts...)
	}
	return err
}

// GetLive reads key from the API server, bypassing the cache (the cache
// when no live reader is set).
func (r LiveFallback) GetLive(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	if r.Live == nil {
		return r.Cached.Get(ctx, key, obj)
	}
	return r.Live.Get(ctx, key, obj)
}

// List lists from the cache only.
func (r LiveFallback) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.Cached.List(ctx, list, opts...)
}
