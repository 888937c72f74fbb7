package visibility

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/kube-openapi/pkg/builder3"
	openapiutil "k8s.io/kube-openapi/pkg/util"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	visibilityapi "github.com/kuota-dev/kuota/api/visibility/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/workload"
)

// fakeSource records what it was asked and answers one workload.
type fakeSource struct {
	cq            kueue.ClusterQueueReference
	lq            cache.LocalQueueKey
	offset, limit int
}

func (f *fakeSource) page() []cache.PendingWorkload {
	info := &workload.Info{Key: types.NamespacedName{Namespace: "ns", Name: "w"}, LocalQueue: "lq", Priority: 7}
	return []cache.PendingWorkload{{Position: queueing.Position{Info: info, InClusterQueue: 4, InLocalQueue: 2},
		Meta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}}}
}

func (f *fakeSource) PendingInClusterQueue(cq kueue.ClusterQueueReference, offset, limit int) ([]cache.PendingWorkload, bool) {
	f.cq, f.offset, f.limit = cq, offset, limit
	return f.page(), cq == "known"
}

func (f *fakeSource) PendingInLocalQueue(lq cache.LocalQueueKey, offset, limit int) ([]cache.PendingWorkload, bool) {
	f.lq, f.offset, f.limit = lq, offset, limit
	return f.page(), lq.Name == "known"
}

func TestGetMapsThePageToTheAPI(t *testing.T) {
	src := &fakeSource{}
	r := storages(src)["clusterqueues/pendingworkloads"].(*pendingREST)
	opts, _, _ := r.NewGetOptions()
	if o := opts.(*visibilityapi.PendingWorkloadOptions); o.Limit != visibilityapi.DefaultLimit || o.Offset != 0 {
		t.Fatalf("default options %+v", o)
	}
	obj, err := r.Get(context.Background(), "known", &visibilityapi.PendingWorkloadOptions{Offset: 3, Limit: 9})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*visibilityapi.PendingWorkloadsSummary).Items
	want := visibilityapi.PendingWorkload{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}, Priority: 7, LocalQueueName: "lq",
		PositionInClusterQueue: 4, PositionInLocalQueue: 2}
	if len(got) != 1 || got[0].Name != want.Name || got[0].Priority != want.Priority || got[0].LocalQueueName != want.LocalQueueName ||
		got[0].PositionInClusterQueue != 4 || got[0].PositionInLocalQueue != 2 {
		t.Fatalf("items %+v, want [%+v]", got, want)
	}
	if src.cq != "known" || src.offset != 3 || src.limit != 9 {
		t.Fatalf("source asked for %q offset %d limit %d", src.cq, src.offset, src.limit)
	}
	if _, err := r.Get(context.Background(), "unknown", &visibilityapi.PendingWorkloadOptions{Limit: 1}); !apierrors.IsNotFound(err) {
		t.Fatalf("unknown ClusterQueue: %v, want NotFound", err)
	}
}

func TestLocalQueueGetUsesTheRequestNamespace(t *testing.T) {
	src := &fakeSource{}
	r := storages(src)["localqueues/pendingworkloads"].(*pendingREST)
	ctx := genericapirequest.WithNamespace(context.Background(), "team-a")
	if _, err := r.Get(ctx, "known", &visibilityapi.PendingWorkloadOptions{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if src.lq != (cache.LocalQueueKey{Namespace: "team-a", Name: "known"}) {
		t.Fatalf("source asked for %+v", src.lq)
	}
	if _, err := r.Get(ctx, "other", &visibilityapi.PendingWorkloadOptions{Limit: 1}); !apierrors.IsNotFound(err) {
		t.Fatalf("unknown LocalQueue: %v, want NotFound", err)
	}
}

// The OpenAPI definitions cover every served kind, as the generic server
// requires to build its type converter.
func TestOpenAPIDefinitionsAreComplete(t *testing.T) {
	s, _, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	cfg := genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, openapinamer.NewDefinitionNamer(s))
	var names []string
	for _, o := range []any{&visibilityapi.ClusterQueue{}, &visibilityapi.LocalQueue{}, &visibilityapi.PendingWorkloadsSummary{}} {
		names = append(names, openapiutil.GetCanonicalTypeName(o))
	}
	defs, err := builder3.BuildOpenAPIDefinitionsForResources(cfg, names...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := managedfields.NewTypeConverter(defs, false); err != nil {
		t.Fatalf("type converter: %v", err)
	}
}
