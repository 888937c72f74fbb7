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
// runtimeSamples; while the LocalQueue has none of the shape, the median
// of the shape in the other LocalQueues of its cohort tree, and while the
// tree has none of the shape, the median of the tree's last runtimes of
// any shape (at start-up the first workloads of a larger shape run before
// any of them has ended, and were all evicted); both marked borrowed
// (scheduling does not stretch a borrowed estimate when workloads are
// late together, so a borrowed estimate holds a preemptor up for at most
// the estimate plus one patience). Never across cohort trees: another tenant's jobs of
// the same size say nothing about these. A runtime is measured from the
// reservation to the Finished condition, so it includes what the API
// server and the job's controller add; under a loaded API server that has
// a long tail, and the longest sample (an earlier choice) then read most
// short workloads as long-running and preempted them. A workload that runs past its estimate
// is still waited for only a patience longer (scheduling's endingSoon).

// runtimeSamples is how many runtimes are kept per LocalQueue and shape.
const runtimeSamples = 16

// maxRuntimeKeys bounds the memory of the history; past it, it starts
// afresh.
const maxRuntimeKeys = 50000

// runtimeKey keys the history: a LocalQueue and a shape, or, for the
// fallbacks, a cohort tree (root) and a shape, or a tree and "" (any
// shape).
type runtimeKey struct {
	lq    LocalQueueKey
	root  treeKey
	shape string
}

// treeKey names a cohort tree by its root: a Cohort, or a ClusterQueue
// without one. The zero value names none.
type treeKey struct {
	cohort bool
	name   string
}

// runtimeHistory holds recent runtimes in a ring per key.
type runtimeHistory map[runtimeKey]*runtimeRing

type runtimeRing struct {
	samples [runtimeSamples]time.Duration
	n, next int
}

// add records a runtime; it reports whether it is the key's first (then
// the running workloads the key estimates are estimated again).
func (h runtimeHistory) add(k runtimeKey, d time.Duration) (first bool) {
	r := h[k]
	if r == nil || r.n == 0 {
		first = true
	}
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
	return first
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
	return workload.ShapeFromPodSets(wl.Spec.PodSets, c.opts.Shape()).Key
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
	first := c.runtimes.add(k, ran)
	if root := c.rootKeyLocked(a.ClusterQueue); root.name != "" {
		treeFirst := c.runtimes.add(runtimeKey{root: root, shape: k.shape}, ran)
		anyFirst := c.runtimes.add(runtimeKey{root: root}, ran)
		switch {
		case anyFirst:
			c.estimateTreeLocked(root, "")
		case treeFirst:
			c.estimateTreeLocked(root, k.shape)
		}
	}
	if first {
		c.estimateRunningLocked(k)
	}
}

// rootKeyLocked names the cohort tree a ClusterQueue belongs to (the
// ClusterQueue itself when it has no Cohort); the zero key when it is
// unknown. It allocates nothing: admissions look it up.
func (c *Cache) rootKeyLocked(cq kueue.ClusterQueueReference) treeKey {
	node := c.state.Tree().ClusterQueue(cq)
	if node == nil {
		return treeKey{}
	}
	root := node.Root()
	return treeKey{cohort: root != node, name: root.Name()}
}

// estimateTreeLocked estimates again the running workloads of a shape in
// a cohort tree whose estimate is missing or borrowed, once the first
// workload of that shape in the tree has finished; with shape "", those of
// every shape, once the first workload of the tree has finished.
func (c *Cache) estimateTreeLocked(root treeKey, shape string) {
	c.state.EachAdmitted(func(a *state.Admitted) bool {
		if (a.ExpectedEnd != 0 && !a.EstimateBorrowed) || c.rootKeyLocked(a.ClusterQueue) != root {
			return true
		}
		r := c.records[a.Key]
		if r == nil {
			return true
		}
		if key := c.shapeKeyOf(r.obj); shape == "" || key == shape {
			cp := *a
			c.estimateLocked(r.obj, key, &cp)
			_ = c.state.Replace(&cp)
		}
		return true
	})
}

// estimateRunningLocked gives an expected end of their own to the running
// workloads of a LocalQueue and shape admitted before any of them had
// finished (with none, or one borrowed from their cohort tree), once the
// first one has.
func (c *Cache) estimateRunningLocked(k runtimeKey) {
	for key := range c.byLocal[k.lq] {
		a, ok := c.state.Admitted(key)
		if !ok || (a.ExpectedEnd != 0 && !a.EstimateBorrowed) {
			continue
		}
		r := c.records[key]
		if r == nil || c.shapeKeyOf(r.obj) != k.shape {
			continue
		}
		cp := *a
		c.estimateLocked(r.obj, k.shape, &cp)
		_ = c.state.Replace(&cp)
	}
}

// estimateLocked sets a's ExpectedEnd (0: unknown) and EstimateBorrowed:
// the end its maximum execution time sets, or the one the median runtime
// of its LocalQueue and shape gives if earlier; while its LocalQueue has
// no runtime of the shape, the median of the shape in its cohort tree
// (borrowed: other teams' workloads of that shape); while the tree has
// none of the shape either, the median of the tree's last runtimes of
// any shape (borrowed).
func (c *Cache) estimateLocked(wl *kueue.Workload, shapeKey string, a *state.Admitted) {
	a.ExpectedEnd, a.EstimateBorrowed = 0, false
	reservedAt := a.ReservedAt
	if reservedAt == 0 {
		return
	}
	var end int64
	if limit := wl.Spec.MaximumExecutionTimeSeconds; limit != nil {
		past := int64(0)
		if p := wl.Status.AccumulatedPastExecutionTimeSeconds; p != nil {
			past = int64(*p)
		}
		end = reservedAt + (int64(*limit)-past)*int64(time.Second)
	}
	d, ok := c.runtimes.typical(runtimeKey{lq: localQueueOf(wl), shape: shapeKey})
	borrowed := false
	if !ok {
		if root := c.rootKeyLocked(a.ClusterQueue); root.name != "" {
			d, ok = c.runtimes.typical(runtimeKey{root: root, shape: shapeKey})
			if !ok {
				d, ok = c.runtimes.typical(runtimeKey{root: root})
			}
			borrowed = ok
		}
	}
	if ok {
		if e := reservedAt + int64(d); end == 0 || e < end {
			end = e
		} else {
			borrowed = false
		}
	}
	a.ExpectedEnd, a.EstimateBorrowed = end, borrowed && end != 0
}
