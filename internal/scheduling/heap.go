package scheduling

import (
	"cmp"
	"strings"
)

// cursorHeap orders ClusterQueues whose head fits: lower borrowing level
// first, then higher priority, then earlier queue-order time, then name.
type cursorHeap []*cursor

func (h cursorHeap) less(a, b *cursor) bool {
	if c := cmp.Compare(a.asg.BorrowingLevel, b.asg.BorrowingLevel); c != 0 {
		return c < 0
	}
	wa, wb := a.items[a.pos], b.items[b.pos]
	if c := cmp.Compare(wb.Priority, wa.Priority); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(wa.QueueOrderTime, wb.QueueOrderTime); c != 0 {
		return c < 0
	}
	return strings.Compare(string(a.name), string(b.name)) < 0
}

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return h.less(h[i], h[j]) }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}
