package cache

import (
	"maps"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Admission fair sharing (internal/afs): the cache keeps one ledger per
// LocalQueue of a ClusterQueue that asks for it, samples them every
// interval from what each LocalQueue holds, charges an entry penalty at
// each admission the scheduler decides, and orders those ClusterQueues'
// candidates by the ledgers. A ledger starts from the LocalQueue's
// published status (status.fairSharing.admissionFairSharingStatus), so a
// restarted manager goes on from where the last one stopped; penalties
// live in memory only, until the next sample accounts for the workloads
// they stood for.

// fairAdmission is the cache's admission fair sharing state.
type fairAdmission struct {
	params  *afs.Params
	ledgers map[LocalQueueKey]*afs.Ledger
	// weights holds every known LocalQueue's weight (1 unless set).
	weights map[LocalQueueKey]float64
	// next (Unix nanoseconds) is when the first ledger is due; 0 when
	// unknown (a queue changed), so that a cycle costs nothing extra
	// between samples.
	next int64
}

// SetAdmissionFairSharing turns admission fair sharing on (p not nil) or
// off, for ClusterQueues whose admissionScope asks for it.
func (c *Cache) SetAdmissionFairSharing(p *afs.Params) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fair.params = p
	c.fair.next = 0
	c.notify()
}

// SetLocalQueueFairSharing records a LocalQueue's fair sharing weight
// (spec.fairSharing.weight, 1 unless set) and, the first time, the usage
// its status published.
func (c *Cache) SetLocalQueueFairSharing(lq *kueue.LocalQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := LocalQueueKey{Namespace: lq.Namespace, Name: kueue.LocalQueueName(lq.Name)}
	w := 1.0
	if fs := lq.Spec.FairSharing; fs != nil && fs.Weight != nil {
		w = fs.Weight.AsApproximateFloat64()
	}
	c.fair.next = 0 // its ClusterQueue may have changed
	if c.fair.weights[key] != w {
		c.fair.weights[key] = w
		c.notify()
	}
	var published *kueue.AdmissionFairSharingStatus
	if fs := lq.Status.FairSharing; fs != nil {
		published = fs.AdmissionFairSharingStatus
	}
	if _, known := c.fair.ledgers[key]; known || published == nil {
		return
	}
	l := &afs.Ledger{Consumed: afs.Amounts{}, LastUpdate: published.LastUpdate.UnixNano()}
	for r, q := range published.ConsumedResources {
		l.Consumed[r] = q.AsApproximateFloat64()
	}
	c.fair.ledgers[key] = l
}

// forgetLocalQueueFairSharingLocked drops a deleted LocalQueue's record.
func (c *Cache) forgetLocalQueueFairSharingLocked(key LocalQueueKey) {
	delete(c.fair.weights, key)
	delete(c.fair.ledgers, key)
}

// fairQueueLocked returns the ClusterQueue of a LocalQueue when admission
// fair sharing applies to it.
func (c *Cache) fairQueueLocked(key LocalQueueKey) (kueue.ClusterQueueReference, bool) {
	if c.fair.params == nil {
		return "", false
	}
	name, ok := c.queues.ClusterQueueFor(key)
	if !ok {
		return "", false
	}
	cq, ok := c.state.ClusterQueue(name)
	return name, ok && cq.FairAdmission
}

// ledgerLocked returns a LocalQueue's ledger, making it if needed.
func (c *Cache) ledgerLocked(key LocalQueueKey) *afs.Ledger {
	l := c.fair.ledgers[key]
	if l == nil {
		l = &afs.Ledger{}
		c.fair.ledgers[key] = l
	}
	return l
}

// chargeLocked adds the entry penalty of an admission the scheduler
// decided (sign 1), or takes it back when its write failed (sign -1).
func (c *Cache) chargeLocked(a *state.Admitted, sign float64) {
	key := LocalQueueKey{Namespace: a.Key.Namespace, Name: a.LocalQueue}
	if _, ok := c.fairQueueLocked(key); !ok {
		return
	}
	req := afs.Amounts{}
	afs.FromUsage(a.Usage, req)
	c.fair.params.AddPenalty(c.ledgerLocked(key), req, sign)
}

// sampleFairLocked samples every ledger that is due at now; it reports
// whether any was.
func (c *Cache) sampleFairLocked(now int64) bool {
	p := c.fair.params
	if p == nil || now < c.fair.next {
		return false
	}
	var held map[kueue.ClusterQueueReference]map[LocalQueueKey]afs.Amounts
	sampled := false
	next := now + int64(p.Interval)
	for key := range c.fair.weights {
		cq, ok := c.fairQueueLocked(key)
		if !ok {
			continue
		}
		l := c.ledgerLocked(key)
		if !p.Due(l, now) {
			next = min(next, l.LastUpdate+int64(p.Interval))
			continue
		}
		if held == nil {
			held = map[kueue.ClusterQueueReference]map[LocalQueueKey]afs.Amounts{}
		}
		byLQ, done := held[cq]
		if !done {
			byLQ = map[LocalQueueKey]afs.Amounts{}
			for _, a := range c.state.AdmittedIn(cq) {
				k := LocalQueueKey{Namespace: a.Key.Namespace, Name: a.LocalQueue}
				if byLQ[k] == nil {
					byLQ[k] = afs.Amounts{}
				}
				afs.FromUsage(a.Usage, byLQ[k])
			}
			held[cq] = byLQ
		}
		p.Sample(l, byLQ[key], now)
		sampled = true
	}
	c.fair.next = next
	return sampled
}

// scoreLocked is a LocalQueue's score: its usage over its weight.
func (c *Cache) scoreLocked(key LocalQueueKey) float64 {
	l := c.fair.ledgers[key]
	if l == nil {
		return 0
	}
	return c.fair.params.Score(l.Total(), c.weightLocked(key))
}

// weightLocked is a LocalQueue's weight (1 unless set).
func (c *Cache) weightLocked(key LocalQueueKey) float64 {
	if w, ok := c.fair.weights[key]; ok {
		return w
	}
	return 1
}

// fairUsageLocked returns the score of every LocalQueue admission fair
// sharing applies to, for the preemption order (Snapshot.FairUsage).
func (c *Cache) fairUsageLocked() map[types.NamespacedName]float64 {
	out := map[types.NamespacedName]float64{}
	for key := range c.fair.weights {
		if _, ok := c.fairQueueLocked(key); ok {
			out[types.NamespacedName{Namespace: key.Namespace, Name: string(key.Name)}] = c.scoreLocked(key)
		}
	}
	return out
}

// fairFuncsLocked returns what afs.Order needs: a workload's LocalQueue's
// score, and the score its admission would add (its entry penalty over
// its LocalQueue's weight). The penalty of a shape is computed once per
// call (shapes are shared by identical workloads).
func (c *Cache) fairFuncsLocked() (score, cost func(*workload.Info) float64) {
	p := c.fair.params
	lq := func(w *workload.Info) LocalQueueKey {
		return LocalQueueKey{Namespace: w.Key.Namespace, Name: w.LocalQueue}
	}
	score = func(w *workload.Info) float64 { return c.scoreLocked(lq(w)) }
	perShape := map[*workload.Shape]afs.Amounts{}
	rate := p.PenaltyRate()
	cost = func(w *workload.Info) float64 {
		penalty, ok := perShape[w.Shape]
		if !ok {
			penalty = afs.Requests(w)
			for r := range penalty {
				penalty[r] *= rate
			}
			perShape[w.Shape] = penalty
		}
		return p.Score(penalty, c.weightLocked(lq(w)))
	}
	return score, cost
}

// fairLocked reports whether admission fair sharing orders a
// ClusterQueue.
func (c *Cache) fairLocked(name kueue.ClusterQueueReference) bool {
	if c.fair.params == nil {
		return false
	}
	cq, ok := c.state.ClusterQueue(name)
	return ok && cq.FairAdmission
}

// orderFairLocked puts the candidates of the ClusterQueues that use
// admission fair sharing in its order.
func (c *Cache) orderFairLocked(qs []workload.Queue) {
	if c.fair.params == nil {
		return
	}
	score, cost := c.fairFuncsLocked()
	for i := range qs {
		if len(qs[i].Workloads) > 1 && c.fairLocked(qs[i].ClusterQueue) {
			qs[i].Workloads = afs.Order(qs[i].Workloads, score, cost)
		}
	}
}

// fairPendingLocked returns every pending workload of a ClusterQueue that
// uses admission fair sharing, in its order, with places in the
// ClusterQueue to match (places in LocalQueues do not change: each
// LocalQueue keeps its own order). It reports false for other queues.
func (c *Cache) fairPendingLocked(cq kueue.ClusterQueueReference) ([]queueing.Position, bool) {
	if !c.fairLocked(cq) {
		return nil, false
	}
	all, _ := c.queues.PendingPage(cq, 0, math.MaxInt)
	infos := make([]*workload.Info, len(all))
	byKey := make(map[Key]queueing.Position, len(all))
	for i, p := range all {
		infos[i] = p.Info
		byKey[p.Info.Key] = p
	}
	score, cost := c.fairFuncsLocked()
	out := make([]queueing.Position, 0, len(all))
	for i, w := range afs.Order(infos, score, cost) {
		p := byKey[w.Key]
		p.InClusterQueue = int32(i)
		out = append(out, p)
	}
	return out, true
}

// FairShare is what admission fair sharing records of one LocalQueue, for
// its status and metrics.
type FairShare struct {
	ClusterQueue kueue.ClusterQueueReference
	Consumed     corev1.ResourceList
	LastUpdate   metav1.Time
	// Usage is the LocalQueue's score: weighed usage over its weight.
	Usage float64
}

// FairShares samples what is due at now and returns the record of every
// LocalQueue admission fair sharing applies to (nil when it is off).
func (c *Cache) FairShares(now int64) map[LocalQueueKey]FairShare {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fair.params == nil {
		return nil
	}
	c.sampleFairLocked(now)
	out := map[LocalQueueKey]FairShare{}
	for key := range c.fair.weights {
		cq, ok := c.fairQueueLocked(key)
		if !ok {
			continue
		}
		l := c.ledgerLocked(key)
		fs := FairShare{ClusterQueue: cq, Consumed: corev1.ResourceList{}, Usage: c.scoreLocked(key)}
		fs.LastUpdate = metav1.NewTime(time.Unix(0, l.LastUpdate).Truncate(time.Second)) // as the API keeps it
		for _, r := range slices.Sorted(maps.Keys(l.Consumed)) {
			fs.Consumed[r] = *resource.NewMilliQuantity(int64(math.Round(l.Consumed[r]*1000)), resource.DecimalSI)
		}
		out[key] = fs
	}
	return out
}
