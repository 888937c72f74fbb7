// Package multicluster runs MultiKueue (AdmissionCheck controllerName
// kueue.x-k8s.io/multikueue) in the manager cluster: it connects to the
// worker clusters MultiKueueClusters describe, keeps the checks' Active
// conditions, and dispatches workloads: copies in the workers, the job in
// the worker that reserved quota first, its status mirrored back. What to
// do for a workload is decided by the pure internal/multikueue.
package multicluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// pingTimeout bounds one connectivity check of a worker.
const pingTimeout = 10 * time.Second

// Remotes holds a client per connected worker cluster, and watches the
// objects this manager created there: their changes are sent on Events
// as the manager's workload they belong to.
type Remotes struct {
	Scheme *runtime.Scheme
	// Origin is the value of the origin label this manager puts on what
	// it creates in workers.
	Origin string
	// Kinds are the job kinds MultiKueue runs, watched in the workers.
	Kinds []client.Object
	// Events carries the manager's workloads whose remote objects changed.
	Events chan event.GenericEvent

	mu       sync.RWMutex
	clusters map[string]*remote
	// missing records since when a worker a workload was placed on has
	// had no connection at all (its MultiKueueCluster deleted, its
	// kubeconfig bad, or never reached since the manager started).
	missing map[string]time.Time
}

type remote struct {
	kubeconfig []byte
	client     client.Client
	// cache holds what this manager created in the worker.
	cache     ctrlcache.Cache
	stop      context.CancelFunc
	active    bool
	lostSince time.Time
}

// NewRemotes returns an empty set of connections.
func NewRemotes(scheme *runtime.Scheme, origin string, kinds []client.Object) *Remotes {
	return &Remotes{Scheme: scheme, Origin: origin, Kinds: kinds, Events: make(chan event.GenericEvent, 1024),
		clusters: map[string]*remote{}, missing: map[string]time.Time{}}
}

// OriginSelector selects what this manager created in a worker.
func (rs *Remotes) OriginSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{kueue.MultiKueueOriginLabel: rs.Origin})
}

// Connect makes (or keeps, when the kubeconfig is the same) the
// connection to a worker and checks it; it reports whether the worker
// answers, and why not.
func (rs *Remotes) Connect(ctx context.Context, name string, kubeconfig []byte, cfg *rest.Config) error {
	rs.mu.Lock()
	r := rs.clusters[name]
	if r != nil && string(r.kubeconfig) != string(kubeconfig) {
		r.stop()
		delete(rs.clusters, name)
		r = nil
	}
	if r == nil {
		var err error
		if r, err = rs.dial(name, kubeconfig, cfg); err != nil {
			rs.mu.Unlock()
			return err
		}
		rs.clusters[name] = r
	}
	rs.mu.Unlock()
	return rs.ping(ctx, name, r)
}

// A worker's client has limits of its own: each request gives up after
// workerRequestTimeout (a worker that stops answering must not hold a
// reconcile for ever), and its rate limiter, one per worker, defaults to
// workerQPS and workerBurst when the kubeconfig sets none (client-go's
// default of 5 a second would pace dispatch to a worker at a crawl). The
// watches run without the timeout: a watch is a long request.
const (
	workerRequestTimeout = 15 * time.Second
	workerQPS            = 50
	workerBurst          = 100
)

// workerConfig is cfg with the worker limits above filled in.
func workerConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	if c.QPS == 0 {
		c.QPS, c.Burst = workerQPS, workerBurst
	}
	return c
}

// dial builds the client and starts the watches of one worker.
func (rs *Remotes) dial(name string, kubeconfig []byte, cfg *rest.Config) (*remote, error) {
	cfg = workerConfig(cfg)
	requests := rest.CopyConfig(cfg)
	if requests.Timeout == 0 {
		requests.Timeout = workerRequestTimeout
	}
	cl, err := client.New(requests, client.Options{Scheme: rs.Scheme})
	if err != nil {
		return nil, fmt.Errorf("building a client: %w", err)
	}
	c, err := ctrlcache.New(cfg, ctrlcache.Options{Scheme: rs.Scheme, DefaultLabelSelector: rs.OriginSelector()})
	if err != nil {
		return nil, fmt.Errorf("building a cache: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := ctrl.Log.WithName("multikueue").WithValues("cluster", name)
	rs.watch(ctx, c, &kueue.Workload{}, func(o client.Object) string { return o.GetName() }, log)
	for _, k := range rs.Kinds {
		rs.watch(ctx, c, k, func(o client.Object) string { return o.GetLabels()[jobframework.PrebuiltWorkloadLabel] }, log)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			log.Error(err, "watching the worker cluster")
		}
	}()
	return &remote{kubeconfig: kubeconfig, client: cl, cache: c, stop: cancel, active: false}, nil
}

// watch sends the manager workload each change of a kind names.
func (rs *Remotes) watch(ctx context.Context, c ctrlcache.Cache, obj client.Object, workload func(client.Object) string, log logr.Logger) {
	inf, err := c.GetInformer(ctx, obj, ctrlcache.BlockUntilSynced(false))
	if err != nil {
		// A kind the worker does not serve has no jobs there to watch.
		log.V(1).Info("not watching a kind in the worker cluster", "kind", fmt.Sprintf("%T", obj), "reason", err.Error())
		return
	}
	send := func(o any) {
		if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		co, ok := o.(client.Object)
		if !ok || workload(co) == "" {
			return
		}
		wl := &kueue.Workload{}
		wl.Namespace, wl.Name = co.GetNamespace(), workload(co)
		select {
		case rs.Events <- event.GenericEvent{Object: wl}:
		case <-ctx.Done():
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: send, DeleteFunc: send, UpdateFunc: func(_, n any) { send(n) }})
	if err != nil {
		log.Error(err, "cannot watch a kind in the worker cluster", "kind", fmt.Sprintf("%T", obj))
	}
}

// ping checks that the worker answers and serves Workloads.
func (rs *Remotes) ping(ctx context.Context, name string, r *remote) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	err := r.client.List(ctx, &kueue.WorkloadList{}, client.Limit(1))
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.clusters[name] != r {
		return err
	}
	switch {
	case err == nil:
		r.active, r.lostSince = true, time.Time{}
		delete(rs.missing, name)
	case r.lostSince.IsZero():
		r.active, r.lostSince = false, time.Now()
	default:
		r.active = false
	}
	return err
}

// Remove drops the connection to a worker.
func (rs *Remotes) Remove(name string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.clusters[name]; r != nil {
		r.stop()
		delete(rs.clusters, name)
	}
}

// Active returns the connected workers' clients by name.
func (rs *Remotes) Active() map[string]client.Client {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	out := map[string]client.Client{}
	for name, r := range rs.clusters {
		if r.active {
			out[name] = r.client
		}
	}
	return out
}

// Connecting says whether a worker was dialled and has not answered yet
// (its watch may already report objects the manager cannot act on yet).
func (rs *Remotes) Connecting() bool {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	for _, r := range rs.clusters {
		if !r.active && r.lostSince.IsZero() {
			return true
		}
	}
	return false
}

// LostSince says since when a worker has not answered: zero when it
// answers; for a worker with no connection at all, since the first time
// this was asked.
func (rs *Remotes) LostSince(name string) time.Time {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.clusters[name]; r != nil && (r.active || !r.lostSince.IsZero()) {
		return r.lostSince
	}
	since, ok := rs.missing[name]
	if !ok {
		since = time.Now()
		rs.missing[name] = since
	}
	return since
}

// Unanswered marks a connected worker as lost when a request to it failed
// the way a worker that stopped answering fails it (no answer in time,
// no connection, overloaded); an error the worker answered with (not
// found, forbidden, invalid) says nothing about the connection. Workloads
// then leave the worker out until its next check (clusters.go) finds it
// answering, instead of each waiting for a request to time out.
func (rs *Remotes) Unanswered(name string, err error) {
	var status apierrors.APIStatus
	if errors.As(err, &status) && !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) &&
		!apierrors.IsServiceUnavailable(err) && !apierrors.IsTooManyRequests(err) {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.clusters[name]; r != nil && r.active {
		r.active, r.lostSince = false, time.Now()
	}
}

// Start waits for the manager to stop, then drops every connection.
func (rs *Remotes) Start(ctx context.Context) error {
	<-ctx.Done()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for name, r := range rs.clusters {
		r.stop()
		delete(rs.clusters, name)
	}
	return nil
}

// Sweep sends every Workload copy this manager has in its connected
// workers to the workload reconciler, which deletes those whose
// manager Workload is gone: a garbage collection for deletions it missed.
func (rs *Remotes) Sweep(ctx context.Context) {
	rs.mu.RLock()
	var caches []ctrlcache.Cache
	for _, r := range rs.clusters {
		if r.active {
			caches = append(caches, r.cache)
		}
	}
	rs.mu.RUnlock()
	for _, c := range caches {
		var list kueue.WorkloadList
		if err := c.List(ctx, &list); err != nil {
			continue
		}
		for i := range list.Items {
			wl := &kueue.Workload{}
			wl.Namespace, wl.Name = list.Items[i].Namespace, list.Items[i].Name
			select {
			case rs.Events <- event.GenericEvent{Object: wl}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// Collector sweeps the workers every Interval.
type Collector struct {
	Remotes  *Remotes
	Interval time.Duration
}

// Start sweeps until the manager stops.
func (g Collector) Start(ctx context.Context) error {
	t := time.NewTicker(g.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			g.Remotes.Sweep(ctx)
		}
	}
}
