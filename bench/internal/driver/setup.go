package driver

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Setup creates the ResourceFlavor, the Cohorts, and per ClusterQueue a
// namespace, the ClusterQueue and a LocalQueue, then waits until the
// manager reports every ClusterQueue Active.
func (d *Driver) Setup(ctx context.Context, timeout time.Duration) error {
	plan := d.opts.Plan
	first := []client.Object{&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: d.opts.Flavor}}}
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
	jobs := make(chan client.Object)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range min(d.opts.Workers, max(1, len(objs))) {
		wg.Go(func() {
			for o := range jobs {
				if err := d.client.Create(ctx, o); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, o := range objs {
		jobs <- o
	}
	close(jobs)
	wg.Wait()
	return first
}
