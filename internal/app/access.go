package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// An informer the API server refuses to list never syncs, and the
// manager then waits at its start barrier forever without a word (and,
// controller-runtime waiting for its caches without heeding a stop, does
// not stop either). So every kind the manager informs on goes through
// accessCache, which asks the API server once per kind
// (SelfSubjectAccessReview) whether the manager may get, list and watch
// it cluster-wide. A refusal is an error naming the verbs and the
// resource, returned instead of the informer: the manager does not start
// (it exits with the error; a kind first read after the start fails its
// controller and so the manager), its readiness check "permissions"
// fails meanwhile, and once the ClusterRole is mended the next start
// passes. The kinds checked are the informers the manager opens: there
// is no second list to forget a kind in.

// accessVerbs are what an informer and the cached client need.
var accessVerbs = []string{"get", "list", "watch"}

// accessChecker remembers, per kind, whether the manager may inform on it.
type accessChecker struct {
	review func(ctx context.Context, attrs authorizationv1.ResourceAttributes) (bool, error)
	mapper meta.RESTMapper

	// checked holds each kind asked about (schema.GroupVersionKind to
	// errOrNil): read without a lock on every cached read.
	checked sync.Map
	mu      sync.Mutex
	// denied names each refused verb and resource ("list
	// cohorts.kueue.x-k8s.io").
	denied []string
}

func newAccessChecker(cfg *rest.Config, mapper meta.RESTMapper) (*accessChecker, error) {
	cl, err := client.New(cfg, client.Options{Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("creating the client that checks the manager's permissions: %w", err)
	}
	review := func(ctx context.Context, attrs authorizationv1.ResourceAttributes) (bool, error) {
		r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attrs}}
		if err := cl.Create(ctx, r); err != nil {
			return false, err
		}
		return r.Status.Allowed, nil
	}
	return &accessChecker{review: review, mapper: mapper}, nil
}

// check asks, the first time a kind is seen, whether the manager may
// get, list and watch it, and returns an error naming what it may not do
// (then and every later time). A review that fails (the API server is
// not reachable) is asked again the next time.
func (a *accessChecker) check(ctx context.Context, gvk schema.GroupVersionKind) error {
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	if gvk.Kind == "" {
		return nil
	}
	if prev, seen := a.checked.Load(gvk); seen {
		return prev.(errOrNil).err
	}
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// Not served: the informer's own error says so.
		return nil
	}
	var denied []string
	for _, verb := range accessVerbs {
		ok, err := a.review(ctx, authorizationv1.ResourceAttributes{Verb: verb, Group: gvk.Group, Version: gvk.Version, Resource: mapping.Resource.Resource})
		if err != nil {
			ctrl.Log.WithName("setup").Info("Could not ask the API server what the manager may read; asking again later",
				"kind", gvk.String(), "error", err.Error())
			return nil
		}
		if !ok {
			denied = append(denied, verb+" "+mapping.Resource.GroupResource().String())
		}
	}
	var result error
	if len(denied) > 0 {
		result = fmt.Errorf("the manager may not %s: grant it in the manager's ClusterRole (the install bundle's kueue-manager-role)",
			strings.Join(denied, ", "))
	}
	if prev, seen := a.checked.LoadOrStore(gvk, errOrNil{result}); seen {
		return prev.(errOrNil).err
	}
	if result != nil {
		ctrl.Log.WithName("setup").Error(result, "Refusing to inform on a kind the manager may not read", "kind", gvk.String())
		a.mu.Lock()
		a.denied = append(a.denied, denied...)
		a.mu.Unlock()
	}
	return result
}

// errOrNil stores an error, nil included, in a sync.Map.
type errOrNil struct{ err error }

// Check is the readiness check: an error naming every refused verb and
// resource.
func (a *accessChecker) Check(*http.Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.denied) == 0 {
		return nil
	}
	d := slices.Clone(a.denied)
	slices.Sort(d)
	return fmt.Errorf("the manager may not %s", strings.Join(d, ", "))
}

// accessCache is the manager's cache, checking access to each kind it is
// asked for.
type accessCache struct {
	ctrlcache.Cache
	access *accessChecker
	scheme *runtime.Scheme
}

var _ ctrlcache.Cache = &accessCache{}

// newAccessCache is the manager's NewCache: the usual informer cache
// behind access checks, whose checker it returns through *checker.
func newAccessCache(checker **accessChecker) ctrlcache.NewCacheFunc {
	return func(cfg *rest.Config, opts ctrlcache.Options) (ctrlcache.Cache, error) {
		inner, err := ctrlcache.New(cfg, opts)
		if err != nil {
			return nil, err
		}
		a, err := newAccessChecker(cfg, opts.Mapper)
		if err != nil {
			return nil, err
		}
		*checker = a
		return &accessCache{Cache: inner, access: a, scheme: opts.Scheme}, nil
	}
}

func (c *accessCache) checkObject(ctx context.Context, obj runtime.Object) error {
	gvk, err := apiutil.GVKForObject(obj, c.scheme)
	if err != nil {
		return nil // the cache's own call says why
	}
	return c.access.check(ctx, gvk)
}

func (c *accessCache) GetInformer(ctx context.Context, obj client.Object, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error) {
	if err := c.checkObject(ctx, obj); err != nil {
		return nil, err
	}
	return c.Cache.GetInformer(ctx, obj, opts...)
}

func (c *accessCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...ctrlcache.InformerGetOption) (ctrlcache.Informer, error) {
	if err := c.access.check(ctx, gvk); err != nil {
		return nil, err
	}
	return c.Cache.GetInformerForKind(ctx, gvk, opts...)
}

func (c *accessCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.checkObject(ctx, obj); err != nil {
		return err
	}
	return c.Cache.Get(ctx, key, obj, opts...)
}

func (c *accessCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.checkObject(ctx, list); err != nil {
		return err
	}
	return c.Cache.List(ctx, list, opts...)
}
