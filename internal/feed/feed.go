// Package feed fills the manager's cache (internal/cache) from the
// informers' event handlers: one generic feeder for every kind the
// scheduler reads (namespaces, flavors, admission checks, priority
// classes, cohorts, ClusterQueues, LocalQueues and Workloads). Handlers do
// no I/O. Updates that change nothing the scheduler reads (status writes,
// Kuota's own included) are dropped before they reach the cache, so they
// neither unpark parked workloads nor start a scheduling cycle.
//
// The start barrier is "every handler has synced": Wait returns once each
// registration has delivered the informer's initial list, so the first
// scheduling cycle sees all usage and nothing is admitted twice after a
// restart.
package feed

import (
	"context"
	"fmt"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/cache"
)

// Feeder holds the handler registrations of the fed kinds.
type Feeder struct {
	cache *cache.Cache
	regs  []registration
}

type registration struct {
	kind string
	reg  toolscache.ResourceEventHandlerRegistration
}

// kind describes how one kind feeds the cache: relevant says whether an
// update changes anything the cache reads; set records an object, del
// forgets one.
type kind[T client.Object] struct {
	name     string
	newObj   func() T
	relevant func(old, new T) bool
	set      func(T)
	del      func(T)
}

func (k kind[T]) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if o, ok := obj.(T); ok {
				k.set(o)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(T)
			n, okNew := newObj.(T)
			if okOld && okNew && k.relevant(o, n) {
				k.set(n)
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if o, ok := obj.(T); ok {
				k.del(o)
			}
		},
	}
}

// register adds a kind's handler to its informer.
func register[T client.Object](ctx context.Context, f *Feeder, inf ctrlcache.Informers, k kind[T]) error {
	informer, err := inf.GetInformer(ctx, k.newObj())
	if err != nil {
		return fmt.Errorf("getting the %s informer: %w", k.name, err)
	}
	reg, err := informer.AddEventHandler(k.handler())
	if err != nil {
		return fmt.Errorf("adding the %s handler: %w", k.name, err)
	}
	f.regs = append(f.regs, registration{kind: k.name, reg: reg})
	return nil
}

// Wait blocks until every handler has delivered its informer's initial
// list, then marks the cache synced: the start barrier.
func (f *Feeder) Wait(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var waiting []string
		for _, r := range f.regs {
			if !r.reg.HasSynced() {
				waiting = append(waiting, r.kind)
			}
		}
		if len(waiting) == 0 {
			f.cache.MarkSynced()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the %v handlers to sync: %w", waiting, ctx.Err())
		case <-tick.C:
		}
	}
}
