package cache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/queueing"
)

// PendingWorkload is a pending workload's place in its queues with the
// metadata the pending-workloads API shows (copied, the caller owns it).
type PendingWorkload struct {
	queueing.Position
	Meta metav1.ObjectMeta
}

// PendingInClusterQueue returns a page of a ClusterQueue's pending
// workloads in scheduling order (queueing.Manager.PendingPage), with each
// one's name, namespace, creation time and owners from the latest
// object the informer showed. It reports false when the ClusterQueue is
// unknown. It reads no API server.
func (c *Cache) PendingInClusterQueue(cq kueue.ClusterQueueReference, offset, limit int) ([]PendingWorkload, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	page, ok := c.queues.PendingPage(cq, offset, limit)
	return c.withMetaLocked(page), ok
}

// PendingInLocalQueue is PendingInClusterQueue for one LocalQueue's
// workloads.
func (c *Cache) PendingInLocalQueue(lq LocalQueueKey, offset, limit int) ([]PendingWorkload, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	page, ok := c.queues.PendingPageInLocalQueue(lq, offset, limit)
	return c.withMetaLocked(page), ok
}

func (c *Cache) withMetaLocked(page []queueing.Position) []PendingWorkload {
	out := make([]PendingWorkload, len(page))
	for i, p := range page {
		out[i].Position = p
		m := &out[i].Meta
		m.Name, m.Namespace = p.Info.Key.Name, p.Info.Key.Namespace
		if r := c.records[p.Info.Key]; r != nil && r.obj != nil {
			m.CreationTimestamp = r.obj.CreationTimestamp
			m.OwnerReferences = append([]metav1.OwnerReference(nil), r.obj.OwnerReferences...)
		}
	}
	return out
}
