package driver

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/scenario"
)

// Setup creates a topology scenario's cluster (its Ready nodes, then its
// Topology: createCluster), the ResourceFlavor, the Cohorts, and per
// ClusterQueue a namespace, the ClusterQueue and a LocalQueue, then waits
// until the manager reports every ClusterQueue Active. What it creates
// carries ClassLabel; nothing is deleted afterwards, since every run has
// a control plane of its own, thrown away at the end.
func (d *Driver) Setup(ctx context.Context, timeout time.Duration) error {
	plan := d.opts.Plan
	if err := d.createCluster(ctx); err != nil {
		return err
	}
	first := []client.Object{plan.ResourceFlavor(d.opts.Flavor)}
	for _, c := range plan.Cohorts {
		first = append(first, scenario.CohortObject(c))
	}
	if err := d.createAll(ctx, first); err != nil {
		return err
	}
	var objs []client.Object
	for _, q := range plan.Queues {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: q.Name}})
	}
	if err := d.createAll(ctx, objs); err != nil {
		return err
	}
	objs = objs[:0]
	for _, q := range plan.Queues {
		objs = append(objs, q.ClusterQueueObject(d.opts.Flavor), q.LocalQueueObject())
	}
	if err := d.createAll(ctx, objs); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for n := d.rec.inactiveQueues(); n > 0; n = d.rec.inactiveQueues() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d ClusterQueues not Active after %s", n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// createAll creates objects on the worker pool and returns the first error.
func (d *Driver) createAll(ctx context.Context, objs []client.Object) error {
	return d.forEach(len(objs), func(i int) error {
		if err := d.client.Create(ctx, objs[i]); err != nil {
			return fmt.Errorf("creating %T %s: %w", objs[i], objs[i].GetName(), err)
		}
		return nil
	})
}

// forEach runs do(0..n-1) on the worker pool and returns the first error.
func (d *Driver) forEach(n int, do func(i int) error) error {
	jobs := make(chan int)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(max(d.opts.Workers, 1), max(1, n)) {
		wg.Go(func() {
			for i := range jobs {
				if err := do(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return first
}
