// Package status writes the status of ClusterQueues, LocalQueues and Cohorts
// from the cache: counts, usage, fair-sharing shares and the Active
// condition. It runs on the leader, refreshes soon after every change
// (usage is visible within about a second) and writes an object only when
// its status differs from what the API holds.
package status

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=clusterqueues/status;localqueues/status;cohorts/status,verbs=get;update;patch

// Reporter is a manager Runnable that needs leader election.
type Reporter struct {
	Client client.Client
	Cache  *cache.Cache
	// FairSharing publishes weighted shares.
	FairSharing bool
	// MinInterval spaces refreshes (default 1s: at most one status write
	// per queue a second, fewer than Kueue makes under load); MaxInterval
	// bounds the time from the end of one refresh to the start of the next,
	// which comes even without a change (default 10s). After a refresh the
	// reporter also waits as long as the refresh took, up to MaxInterval:
	// status only informs, and when a loaded API server makes its writes
	// slow, the next refresh comes later and leaves the server to
	// admissions and finishes. A refresh that takes longer than
	// MinInterval computes the statuses again as it goes, so that what it
	// writes last is not as old as the refresh.
	MinInterval, MaxInterval time.Duration
	// OnRefresh, when set, receives the statuses computed at the start of
	// each refresh.
	OnRefresh func(*Statuses)
	// Metrics chooses the gauges published after each refresh.
	Metrics MetricsOptions
	// Loaded, when set, is closed once the cache holds the initial
	// objects; until then nothing is written (a status computed from a
	// half-loaded cache would report zero usage).
	Loaded <-chan struct{}

	published published
	// written remembers the last status written to each object (by UID):
	// the cache may not show a write yet, and a status computed meanwhile
	// that equals the stale cached one must still be written.
	written   map[types.UID]writtenStatus
	writtenMu sync.Mutex
}

// NeedLeaderElection: only the leader writes status.
func (r *Reporter) NeedLeaderElection() bool { return true }

// Start refreshes until ctx ends.
func (r *Reporter) Start(ctx context.Context) error {
	log := ctrl.Log.WithName("status")
	if r.Loaded != nil {
		select {
		case <-ctx.Done():
			return nil
		case <-r.Loaded:
		}
	}
	minI, maxI := r.intervals()
	for {
		changed := r.Cache.Changed()
		began := time.Now()
		if err := r.Refresh(ctx); err != nil {
			log.V(1).Info("status refresh incomplete", "error", err.Error())
		}
		ended := time.Now()
		wait := pause(ended.Sub(began), minI, maxI)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-time.After(time.Until(ended.Add(maxI))):
		}
	}
}

// intervals returns MinInterval and MaxInterval with their defaults, the
// maximum no shorter than the minimum.
func (r *Reporter) intervals() (minI, maxI time.Duration) {
	minI, maxI = r.MinInterval, r.MaxInterval
	if minI <= 0 {
		minI = time.Second
	}
	if maxI <= 0 {
		maxI = 10 * time.Second
	}
	return minI, max(minI, maxI)
}

// pause is how long after a refresh that took took the next one may start
// at the earliest: minI plus as long as the refresh took, but no more than
// maxI. A refresh that took minutes on an overloaded API server (a thousand
// queues' statuses, at a few writes a second) used to be followed by
// minutes of pause as well, and ClusterQueues showed the usage of
// workloads that had ended more than a minute before.
func pause(took, minI, maxI time.Duration) time.Duration {
	return min(minI+took, maxI)
}

// Refresh computes every status from the cache and writes those that
// changed.
func (r *Reporter) Refresh(ctx context.Context) error {
	minI, _ := r.intervals()
	st := Compute(r.Cache, r.FairSharing)
	if r.OnRefresh != nil {
		r.OnRefresh(st)
	}
	computed := time.Now()
	// fresh returns the statuses, computed again once they are older than
	// minI: writes wait for free writers, and on a slow API server a
	// thousand queues take minutes.
	fresh := func() *Statuses {
		if time.Since(computed) >= minI {
			st, computed = Compute(r.Cache, r.FairSharing), time.Now()
		}
		return st
	}
	w := r.newWrites(ctx)
	var cqs kueue.ClusterQueueList
	cqErr := r.Client.List(ctx, &cqs)
	w.note(cqErr)
	for i := range cqs.Items {
		cq := &cqs.Items[i]
		w.write(cq, &cq.Status, fresh().ClusterQueue(cq))
	}
	var lqs kueue.LocalQueueList
	lqErr := r.Client.List(ctx, &lqs)
	w.note(lqErr)
	for i := range lqs.Items {
		lq := &lqs.Items[i]
		w.write(lq, &lq.Status, fresh().LocalQueue(lq))
	}
	if r.FairSharing {
		var cohorts kueue.CohortList
		w.note(r.Client.List(ctx, &cohorts))
		for i := range cohorts.Items {
			co := &cohorts.Items[i]
			w.write(co, &co.Status, fresh().Cohort(co))
		}
	}
	err := w.wait()
	if cqErr == nil && lqErr == nil {
		// Writes updated the listed objects in place, so conditions are
		// current.
		r.reportMetrics(st, cqs.Items, lqs.Items)
	}
	return err
}
