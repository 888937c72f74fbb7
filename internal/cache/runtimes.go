package cache

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// How long a workload still runs decides whether the scheduler preempts
// it or waits for it (scheduling.Options.Patience). The cache estimates it
// from the workload's maximum execution time, or from how long the last
// workloads of the same LocalQueue and shape ran: the median of the last
// runtimeSamples. A runtime is measured from the reservation to the
// Finished condition, so it includes what the API server and the job's
// controller add; under a loaded API server that has a long tail, and the
// longest sample (an earlier choice) then read most short workloads as
// long-running and preempted them. A workload that runs past its estimate
// is still waited for only a patience longer (scheduling's endingSoon).

// runtimeSamples is how many runtimes are kept per LocalQueue and shape.
const runtimeSamples = 16

// maxRuntimeKeys bounds the memory of the history; past it, it starts
// afresh.
const maxRuntimeKeys = 50000

type runtimeKey struct {
	lq    LocalQueueKey
	shape string
}

// runtimeHistory holds recent runtimes in a ring per key.
type runtimeHistory map[runtimeKey]*runtimeRing

type runtimeRing struct {
	samples [runtimeSamples]time.Duration
	n, next int
}

func (h runtimeHistory) add(k runtimeKey, d time.Duration) {
	r := h[k]
	if r == nil {
		if len(h) >= maxRuntimeKeys {
			clear(h)
		}
		r = &runtimeRing{}
		h[k] = r
	}
	r.samples[r.next] = d
	r.next = (r.next + 1) % runtimeSamples
	r.n = min(r.n+1, runtimeSamples)
}

// typical returns the median of the recent runtimes (the upper one of an
// even count), or false without samples.
func (h runtimeHistory) typical(k runtimeKey) (time.Duration, bool) {
	r := h[k]
	if r == nil || r.n == 0 {
		return 0, false
	}
	var buf [runtimeSamples]time.Duration
	xs := buf[:r.n]
	copy(xs, r.samples[:r.n])
	slices.Sort(xs)
	return xs[len(xs)/2], true
}

func (c *Cache) shapeKeyOf(wl *kueue.Workload) string {
	return workload.ShapeFromPodSets(wl.Spec.PodSets, workload.ShapeOptions{ExcludedResourcePrefixes: c.opts.ExcludedResourcePrefixes}).Key
}

// noteRuntimeLocked records how long a finished workload ran, from its
// reservation to its Finished condition; held is the copy it held quota
// with, whose LocalQueue and shape key the sample.
func (c *Cache) noteRuntimeLocked(wl, held *kueue.Workload, a *state.Admitted) {
	fin := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
	if fin == nil || a.ReservedAt == 0 {
		return
	}
	ran := fin.LastTransitionTime.Time.Sub(time.Unix(0, a.ReservedAt))
	if ran < 0 {
		return
	}
	// Conditions are stamped to the second: a workload that seems to have
	// run for nothing ran for less than a second.
	ran = max(ran, time.Second)
	k := runtimeKey{lq: localQueueOf(held), shape: c.shapeKeyOf(held)}
	_, known := c.runtimes.typical(k)
	c.runtimes.add(k, ran)
	if !known {
		c.estimateRunningLocked(k)
	}
}

// estimateRunningLocked gives an expected end to the running workloads of
// a LocalQueue and shape admitted before any of them had finished, once the
// first one has.
func (c *Cache) estimateRunningLocked(k runtimeKey) {
	for key := range c.byLocal[k.lq] {
		a, ok := c.state.Admitted(key)
		if !ok || a.ExpectedEnd != 0 {
			continue
		}
		r := c.records[key]
		if r == nil || c.shapeKeyOf(r.obj) != k.shape {
			continue
		}
		cp := *a
		cp.ExpectedEnd = c.expectedEndLocked(r.obj, k.shape, a.ReservedAt)
		_ = c.state.Replace(&cp)
	}
}

// expectedEndLocked estimates when a workload holding quota since
// reservedAt ends by itself (0: unknown).
func (c *Cache) expectedEndLocked(wl *kueue.Workload, shapeKey string, reservedAt int64) int64 {
	if reservedAt == 0 {
		return 0
	}
	var end int64
	if limit := wl.Spec.MaximumExecutionTimeSeconds; limit != nil {
		past := int64(0)
		if p := wl.Status.AccumulatedPastExecutionTimeSeconds; p != nil {
			past = int64(*p)
		}
		end = reservedAt + (int64(*limit)-past)*int64(time.Second)
	}
	if d, ok := c.runtimes.typical(runtimeKey{lq: localQueueOf(wl), shape: shapeKey}); ok {
		if e := reservedAt + int64(d); end == 0 || e < end {
			end = e
		}
	}
	return end
}
