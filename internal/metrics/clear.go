package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// ClearClusterQueue deletes every series of a deleted ClusterQueue: all
// series whose cluster_queue (or preempting_cluster_queue) label is cq, in
// every family, LocalQueue families included.
func ClearClusterQueue(cq string) {
	record(func(c *collectors, _ string) {
		for _, f := range c.families {
			if f.hasLabel(lCQ) {
				f.vec.DeletePartialMatch(prometheus.Labels{lCQ: cq})
			}
			if f.hasLabel("preempting_cluster_queue") {
				f.vec.DeletePartialMatch(prometheus.Labels{"preempting_cluster_queue": cq})
			}
		}
		c.unadmittedSeen.forget(cq)
	})
}

// ClearClusterQueueResources deletes the per-flavor resource series of cq
// (reservation, usage, quotas, limits, pending resources) and its weighted
// share. Call it before re-reporting when the ClusterQueue's cohort
// changes or a flavor or resource leaves it, since those are labels of
// the series.
func ClearClusterQueueResources(cq string) {
	record(func(c *collectors, _ string) {
		match := prometheus.Labels{lCQ: cq}
		for _, g := range []*prometheus.GaugeVec{
			c.reservation, c.usage, c.nominalQuota, c.borrowingLimit,
			c.lendingLimit, c.resourcePending, c.weightedShare,
		} {
			g.DeletePartialMatch(match)
		}
	})
}

// ClearLocalQueue deletes every series of a deleted LocalQueue.
func ClearLocalQueue(lq LocalQueue) {
	record(func(c *collectors, _ string) {
		match := prometheus.Labels{lName: lq.Name, lNS: lq.Namespace}
		for _, f := range c.families {
			if f.scope == scopeLocalQueue {
				f.vec.DeletePartialMatch(match)
			}
		}
		c.lqUnadmittedSeen.forget(lq.key())
	})
}

// ClearCohort deletes every series that describes a deleted cohort (the
// kueue_cohort_* families). Series of ClusterQueues that name the cohort
// in a label are left to ClearClusterQueueResources and the info reports.
func ClearCohort(cohort string) {
	record(func(c *collectors, _ string) {
		match := prometheus.Labels{lCohort: cohort}
		for _, f := range c.families {
			if f.scope == scopeCohort {
				f.vec.DeletePartialMatch(match)
			}
		}
	})
}

// replacer remembers, per owner, the keys of the series reported last, so
// that a full report can tell which ones vanished.
type replacer[K comparable] struct {
	mu   sync.Mutex
	last map[string]map[K]struct{}
}

func newReplacer[K comparable]() *replacer[K] {
	return &replacer[K]{last: map[string]map[K]struct{}{}}
}

// replace records next as owner's keys and returns the previous keys that
// are not in next.
func (r *replacer[K]) replace(owner string, next []K) []K {
	r.mu.Lock()
	defer r.mu.Unlock()
	cur := make(map[K]struct{}, len(next))
	for _, k := range next {
		cur[k] = struct{}{}
	}
	var stale []K
	for k := range r.last[owner] {
		if _, ok := cur[k]; !ok {
			stale = append(stale, k)
		}
	}
	if len(cur) == 0 {
		delete(r.last, owner)
	} else {
		r.last[owner] = cur
	}
	return stale
}

// forget drops what is remembered about owner.
func (r *replacer[K]) forget(owner string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, owner)
}
