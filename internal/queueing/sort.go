package queueing

import (
	"slices"

	"github.com/kuota-dev/kuota/internal/workload"
)

func compareEntries(a, b *entry) int { return workload.Compare(a.info, b.info) }

// sort puts q.items in queue order (dropping removed entries first). When
// only workloads that joined since the last sort are out of place (the
// common case: new work arrives), it sorts those and merges them in, each
// placed by binary search, instead of sorting the whole queue: the cost is
// k log k + k log n comparisons and one copy, not n log n comparisons.
func (q *queue) sort() {
	q.compact()
	if q.sorted {
		return
	}
	q.lqPos = nil
	n := min(q.inOrder, len(q.items))
	if n == 0 {
		slices.SortFunc(q.items, compareEntries)
	} else if n < len(q.items) {
		merged := mergeSorted(q.spare[:0], q.items[:n], slices.Clone(q.items[n:]))
		clear(q.items) // the old slice becomes the spare; it must not keep entries alive
		q.items, q.spare = merged, q.items[:0]
	}
	q.sorted, q.inOrder = true, 0
}

// mergeSorted appends to out the ordered merge of prefix (in order) and
// tail (sorted here).
func mergeSorted(out, prefix, tail []*entry) []*entry {
	slices.SortFunc(tail, compareEntries)
	out = slices.Grow(out, len(prefix)+len(tail))
	lo := 0
	for _, e := range tail {
		i, _ := slices.BinarySearchFunc(prefix[lo:], e, compareEntries)
		out = append(out, prefix[lo:lo+i]...)
		out = append(out, e)
		lo += i
	}
	return append(out, prefix[lo:]...)
}
