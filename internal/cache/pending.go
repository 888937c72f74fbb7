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
// unknown. It reads no API server. A ClusterQueue that uses admission
// fair sharing lists its workloads in that order (fairPendingLocked).
func (c *Cache) PendingInClusterQueue(cq kueue.ClusterQueueReference, offset, limit int) ([]PendingWorkload, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if all, fair := c.fairPendingLocked(cq); fair {
		if offset < 0 || offset >= len(all) || limit <= 0 {
			return []PendingWorkload{}, true
		}
		return c.withMetaLocked(all[offset:min(len(all), offset+limit)]), true
	}
	page, ok := c.queues.PendingPage(cq, offset, limit)
	return c.withMetaLocked(page), ok
}

// PendingInLocalQueue is PendingInClusterQueue for one LocalQueue's
// workloads.
func (c *Cache) PendingInLocalQueue(lq LocalQueueKey, offset, limit int) ([]PendingWorkload, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	page, ok := c.queues.PendingPageInLocalQueue(lq, offset, limit)
	if cq, known := c.queues.ClusterQueueFor(lq); ok && known && len(page) > 0 {
		if all, fair := c.fairPendingLocked(cq); fair {
			place := make(map[Key]int32, len(all))
			for _, p := range all {
				place[p.Info.Key] = p.InClusterQueue
			}
			for i := range page {
				page[i].InClusterQueue = place[page[i].Info.Key]
			}
		}
	}
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
