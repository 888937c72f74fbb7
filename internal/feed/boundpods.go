package feed

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// BoundPods feeds the cache with the pods placed by topology (labelled
// kueue.x-k8s.io/tas=true) and the nodes they are bound to, read from the
// topology ungater's pod informer (no watch of its own): a node that is
// not ready fails for a workload once none of its pods runs there
// (lifecycle.NodeCheck.Pods). It runs on every replica.
type BoundPods struct {
	Cache *cache.Cache
	// Informers is the topology ungater's pod cache.
	Informers ctrlcache.Informers
}

// NeedLeaderElection is false: followers keep their cache fed too.
func (b *BoundPods) NeedLeaderElection() bool { return false }

// Start registers the handler, marks the pods listed once the informer
// has delivered them, and waits for ctx to end.
func (b *BoundPods) Start(ctx context.Context) error {
	f := &Feeder{cache: b.Cache}
	if err := register(ctx, f, b.Informers, boundPods(b.Cache)); err != nil {
		return err
	}
	if !f.waitHandlers(ctx) {
		return nil
	}
	b.Cache.MarkBoundPodsSynced()
	<-ctx.Done()
	return nil
}

// boundPod is what the cache keeps of a pod placed by topology; ok is
// false for a pod of no Workload.
type boundPod struct {
	workload types.NamespacedName
	node     string
	state    cache.PodState
	ok       bool
}

func boundPodOf(p *corev1.Pod) boundPod {
	name := p.Annotations[jobframework.WorkloadAnnotation]
	if name == "" {
		return boundPod{}
	}
	st := cache.PodRunning
	switch {
	case !p.DeletionTimestamp.IsZero() || p.Status.Phase == corev1.PodFailed:
		st = cache.PodEnded
	case p.Status.Phase == corev1.PodSucceeded:
		st = cache.PodSucceeded
	}
	return boundPod{workload: types.NamespacedName{Namespace: p.Namespace, Name: name}, node: p.Spec.NodeName, state: st, ok: true}
}

func boundPods(c *cache.Cache) kind[*corev1.Pod] {
	key := func(p *corev1.Pod) types.NamespacedName {
		return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	}
	return kind[*corev1.Pod]{
		name:     "Pod (placed by topology)",
		newObj:   func() *corev1.Pod { return &corev1.Pod{} },
		relevant: func(o, n *corev1.Pod) bool { return boundPodOf(o) != boundPodOf(n) },
		set: func(p *corev1.Pod) {
			b := boundPodOf(p)
			if !b.ok {
				c.DeleteBoundPod(key(p))
				return
			}
			c.SetBoundPod(key(p), b.workload, b.node, b.state)
		},
		del: func(p *corev1.Pod) { c.DeleteBoundPod(key(p)) },
	}
}
