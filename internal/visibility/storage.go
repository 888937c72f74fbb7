package visibility

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
)

// Source is where the answers come from: the manager's cache.
type Source interface {
	PendingInClusterQueue(cq kueue.ClusterQueueReference, offset, limit int) ([]cache.PendingWorkload, bool)
	PendingInLocalQueue(lq cache.LocalQueueKey, offset, limit int) ([]cache.PendingWorkload, bool)
}

var _ Source = (*cache.Cache)(nil)

// storages returns the REST storage of one version: the queues themselves
// (placeholders, no verbs, as in Kueue) and their pendingworkloads
// subresources.
func storages(src Source) map[string]rest.Storage {
	return map[string]rest.Storage{
		"clusterqueues":                  &queueREST{namespaced: false, singular: "clusterqueue", new: func() runtime.Object { return &visibilityapi.ClusterQueue{} }},
		"clusterqueues/pendingworkloads": &pendingREST{src: src, namespaced: false},
		"localqueues":                    &queueREST{namespaced: true, singular: "localqueue", new: func() runtime.Object { return &visibilityapi.LocalQueue{} }},
		"localqueues/pendingworkloads":   &pendingREST{src: src, namespaced: true},
	}
}

// queueREST is the parent resource of a pendingworkloads subresource.
type queueREST struct {
	namespaced bool
	singular   string
	new        func() runtime.Object
}

var (
	_ rest.Storage              = (*queueREST)(nil)
	_ rest.Scoper               = (*queueREST)(nil)
	_ rest.SingularNameProvider = (*queueREST)(nil)
)

func (r *queueREST) New() runtime.Object     { return r.new() }
func (r *queueREST) Destroy()                {}
func (r *queueREST) NamespaceScoped() bool   { return r.namespaced }
func (r *queueREST) GetSingularName() string { return r.singular }

// pendingREST answers GET on a queue's pendingworkloads subresource.
type pendingREST struct {
	src        Source
	namespaced bool
}

var (
	_ rest.Storage              = (*pendingREST)(nil)
	_ rest.Scoper               = (*pendingREST)(nil)
	_ rest.GetterWithOptions    = (*pendingREST)(nil)
	_ rest.SingularNameProvider = (*pendingREST)(nil)
)

func (r *pendingREST) New() runtime.Object     { return &visibilityapi.PendingWorkloadsSummary{} }
func (r *pendingREST) Destroy()                {}
func (r *pendingREST) NamespaceScoped() bool   { return r.namespaced }
func (r *pendingREST) GetSingularName() string { return "pendingworkloads" }

// NewGetOptions: offset and limit come from the query. The server decodes
// a non-empty query over the defaults here (OptionsFromQuery); an empty
// one leaves them as they are.
func (r *pendingREST) NewGetOptions() (runtime.Object, bool, string) {
	return &visibilityapi.PendingWorkloadOptions{Limit: visibilityapi.DefaultLimit}, false, ""
}

// Get returns a page of the queue's pending workloads.
func (r *pendingREST) Get(ctx context.Context, name string, opts runtime.Object) (runtime.Object, error) {
	o, ok := opts.(*visibilityapi.PendingWorkloadOptions)
	if !ok {
		return nil, fmt.Errorf("unexpected options %T", opts)
	}
	offset, limit := int(min(o.Offset, int64(1)<<31-1)), int(min(o.Limit, visibilityapi.MaxLimit))
	var page []cache.PendingWorkload
	var found bool
	if r.namespaced {
		ns, _ := genericapirequest.NamespaceFrom(ctx)
		page, found = r.src.PendingInLocalQueue(cache.LocalQueueKey{Namespace: ns, Name: kueue.LocalQueueName(name)}, offset, limit)
		if !found {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: visibilityapi.GroupName, Resource: "localqueues"}, name)
		}
	} else {
		page, found = r.src.PendingInClusterQueue(kueue.ClusterQueueReference(name), offset, limit)
		if !found {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: visibilityapi.GroupName, Resource: "clusterqueues"}, name)
		}
	}
	return summary(page), nil
}

// summary turns a page into the API's shape.
func summary(page []cache.PendingWorkload) *visibilityapi.PendingWorkloadsSummary {
	out := &visibilityapi.PendingWorkloadsSummary{Items: make([]visibilityapi.PendingWorkload, len(page))}
	for i, p := range page {
		out.Items[i] = visibilityapi.PendingWorkload{
			ObjectMeta:             p.Meta,
			Priority:               p.Info.Priority,
			LocalQueueName:         string(p.Info.LocalQueue),
			PositionInClusterQueue: p.InClusterQueue,
			PositionInLocalQueue:   p.InLocalQueue,
		}
	}
	return out
}
