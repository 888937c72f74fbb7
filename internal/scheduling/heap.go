package scheduling

import (
	"cmp"
	"container/heap"
	"strings"
)

// cursorHeap is the classic order of ready ClusterQueues: a head waiting
// for its victims first, then lower borrowing level, higher priority,
// earlier queue-order time, and finally the queue's name.
type cursorHeap []*cursor

func (h *cursorHeap) push(cur *cursor) { heap.Push(h, cur) }

func (h *cursorHeap) pop() *cursor {
	if h.Len() == 0 {
		return nil
	}
	return heap.Pop(h).(*cursor)
}

func (h *cursorHeap) outranked(cur *cursor) bool {
	return h.Len() > 0 && h.less((*h)[0], cur)
}

func (h cursorHeap) less(a, b *cursor) bool {
	wa, wb := a.items[a.pos], b.items[b.pos]
	if wa.Preempting != wb.Preempting {
		return wa.Preempting
	}
	if c := cmp.Compare(a.asg.BorrowingLevel, b.asg.BorrowingLevel); c != 0 {
		return c < 0
	}
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
