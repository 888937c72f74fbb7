package demo

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// rewatchDelay spaces the restarts of a watch that failed or ended.
const rewatchDelay = time.Second

// watchWorkloads sends every version of the Workloads in the teams'
// namespaces to out until ctx ends. The live table polls once a second;
// the watch lets the tracker see the states a poll would miss, such as a
// workload preempted and admitted again within the second (its Preempted
// condition is True only in between). A watch that ends is started again;
// what it missed the poll still sees.
func watchWorkloads(ctx context.Context, c client.WithWatch, out chan<- *kueue.Workload) {
	for _, team := range Teams {
		go watchNamespace(ctx, c, team.Namespace, out)
	}
}

func watchNamespace(ctx context.Context, c client.WithWatch, ns string, out chan<- *kueue.Workload) {
	for ctx.Err() == nil {
		w, err := c.Watch(ctx, &kueue.WorkloadList{}, client.InNamespace(ns))
		if err == nil {
			forward(ctx, w, out)
			w.Stop()
		}
		if !sleepUntil(ctx, time.Now().Add(rewatchDelay)) {
			return
		}
	}
}

// forward sends the Workloads of w's events to out until w ends or ctx
// does.
func forward(ctx context.Context, w watch.Interface, out chan<- *kueue.Workload) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			wl, isWorkload := ev.Object.(*kueue.Workload)
			if !isWorkload || (ev.Type != watch.Added && ev.Type != watch.Modified) {
				continue
			}
			select {
			case out <- wl:
			case <-ctx.Done():
				return
			}
		}
	}
}
