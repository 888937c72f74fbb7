// Package report holds what the scheduler and the workload controller
// both record about a Workload beside their writes: the labels of its
// metric series and the description of an eviction for metrics.
package report

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/metrics"
)

// Labels says how a workload's events are labelled in metrics. The zero
// value records ClusterQueue series only.
type Labels struct {
	// Reader reads LocalQueues (for the selector); needed when LocalQueues.
	Reader client.Reader
	Cache  *cache.Cache
	// LocalQueues enables LocalQueue series, for the LocalQueues Selector
	// matches (all when nil).
	LocalQueues bool
	Selector    labels.Selector
}

// Of returns the metric labels of a workload counted in ClusterQueue cq.
func (l *Labels) Of(ctx context.Context, wl *kueue.Workload, cq kueue.ClusterQueueReference) metrics.Workload {
	out := metrics.Workload{ClusterQueue: string(cq)}
	if ref := wl.Spec.PriorityClassRef; ref != nil {
		out.PriorityClass = ref.Name
	}
	if l == nil {
		return out
	}
	if l.Cache != nil {
		out.Cohorts = l.Cache.Ancestors(cq)
	}
	if l.LocalQueues && wl.Spec.QueueName != "" {
		out.LocalQueue = l.localQueue(ctx, wl.Namespace, string(wl.Spec.QueueName))
	}
	return out
}

func (l *Labels) localQueue(ctx context.Context, ns, name string) metrics.LocalQueue {
	key := metrics.LocalQueue{Namespace: ns, Name: name}
	if l.Selector == nil || l.Selector.Empty() {
		return key
	}
	if l.Reader == nil {
		return metrics.LocalQueue{}
	}
	var lq kueue.LocalQueue
	if err := l.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &lq); err != nil || !l.Selector.Matches(labels.Set(lq.Labels)) {
		return metrics.LocalQueue{}
	}
	return key
}

// EvictionOf describes an eviction for metrics, from the status that
// records it (its schedulingStats count this eviction already).
func EvictionOf(wl *kueue.Workload, st *kueue.WorkloadStatus, reason string, cause kueue.EvictionUnderlyingCause, now time.Time) metrics.Eviction {
	ev := metrics.Eviction{Reason: reason, UnderlyingCause: string(cause)}
	if st.SchedulingStats != nil {
		for _, e := range st.SchedulingStats.Evictions {
			if e.Reason == reason && e.UnderlyingCause == cause {
				ev.FirstForWorkload = e.Count == 1
			}
		}
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPodsReady); c != nil && c.Status == "True" {
		ev.PodsWereReady = true
		ev.PodsReadyFor = now.Sub(c.LastTransitionTime.Time)
	}
	return ev
}
