package afs

import (
	"container/heap"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Order returns the pending workloads of one ClusterQueue (ws, in queue
// order: priority, then time) in admission fair sharing order. Workloads
// that already preempted others keep their place at the front, so the
// quota freed for them goes to them. The rest are taken one at a time
// from the LocalQueue with the lowest score (score(w), for any workload w
// of the LocalQueue: its usage over its weight), each in its LocalQueue's own order; a workload taken adds
// cost(w) to its LocalQueue's score, as its entry penalty will once it is
// admitted, so that within one cycle the LocalQueues take turns instead
// of the least used one taking everything. Ties go to the workload first
// in queue order. ws is not modified; with one LocalQueue it is returned
// as it is.
func Order(ws []*workload.Info, score, cost func(*workload.Info) float64) []*workload.Info {
	out := make([]*workload.Info, 0, len(ws))
	lists := map[laneKey]*lane{}
	var h laneHeap
	for i, w := range ws {
		if w.Preempting {
			out = append(out, w)
			continue
		}
		k := laneKey{w.Key.Namespace, w.LocalQueue}
		l := lists[k]
		if l == nil {
			l = &lane{}
			lists[k] = l
			h = append(h, l)
		}
		l.items = append(l.items, w)
		l.first = append(l.first, i)
	}
	if len(h) <= 1 && len(out) == 0 {
		return ws
	}
	for _, l := range h {
		l.score = score(l.items[0])
	}
	heap.Init(&h)
	for h.Len() > 0 {
		l := h[0]
		w := l.items[l.next]
		out = append(out, w)
		l.next++
		if l.next == len(l.items) {
			heap.Pop(&h)
			continue
		}
		l.score += cost(w)
		heap.Fix(&h, 0)
	}
	return out
}

// laneKey names a LocalQueue.
type laneKey struct {
	namespace string
	name      kueue.LocalQueueName
}

// lane is one LocalQueue's workloads in queue order and its running score.
type lane struct {
	items []*workload.Info
	// first holds each item's position in the ClusterQueue's order.
	first []int
	next  int
	score float64
}

type laneHeap []*lane

func (h laneHeap) Len() int { return len(h) }
func (h laneHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.score != b.score {
		return a.score < b.score
	}
	return a.first[a.next] < b.first[b.next]
}
func (h laneHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *laneHeap) Push(x any)   { *h = append(*h, x.(*lane)) }
func (h *laneHeap) Pop() any {
	old := *h
	l := old[len(old)-1]
	*h = old[:len(old)-1]
	return l
}

// Requests returns what a workload asks for in all, in units, leaving out
// the pod count (charged only where a ClusterQueue covers "pods"; the
// projected penalty is an estimate).
func Requests(w *workload.Info) Amounts {
	out := Amounts{}
	if w.Shape == nil {
		return out
	}
	for _, ps := range w.Shape.PodSets {
		for r, v := range ps.PerPod {
			if r != corev1.ResourcePods {
				out[r] += float64(v) / float64(resources.Unit(r)) * float64(ps.Count)
			}
		}
	}
	return out
}

// FromUsage sums quota usage per resource over flavors, in units.
func FromUsage(u resources.FlavorResourceQuantities, into Amounts) {
	for fr, v := range u {
		into[fr.Resource] += float64(v) / float64(resources.Unit(fr.Resource))
	}
}
