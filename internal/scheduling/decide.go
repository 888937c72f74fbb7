package scheduling

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// cycle is the working state of one Decide call.
type cycle struct {
	snap     *state.Snapshot
	tree     *hierarchy.Tree
	assigner *flavors.Assigner
	versions map[*hierarchy.Node]uint64
	result   Result
	ready    cursorHeap
}

// cursor walks one ClusterQueue's pending workloads.
type cursor struct {
	name  kueue.ClusterQueueReference
	cq    *state.ClusterQueue
	node  *hierarchy.Node
	root  *hierarchy.Node
	items []*workload.Info
	pos   int
	// failed remembers, for BestEffortFIFO, the decision of a shape that did
	// not fit: usage only grows during a cycle, so later workloads of the
	// same shape cannot fit either.
	failed map[*workload.Shape]*Decision
	// head's assignment and the root version it was computed at.
	asg     flavors.Assignment
	version uint64
}

// Decide runs one scheduling cycle. queues hold each ClusterQueue's pending
// workloads in queue order. Every workload that fits is admitted, in order:
// across ClusterQueues, heads that fit without borrowing go first, then by
// priority and queue-order time; within a queue, StrictFIFO stops at the
// first workload that does not fit and BestEffortFIFO skips it. The snapshot
// is not modified.
func Decide(snap *state.Snapshot, queues []workload.Queue, opts Options) Result {
	c := &cycle{
		snap:     snap,
		tree:     snap.Tree.Clone(),
		assigner: flavors.NewAssigner(snap.Flavors, opts.Flavors),
		versions: map[*hierarchy.Node]uint64{},
	}
	total := 0
	for _, q := range queues {
		total += len(q.Workloads)
	}
	c.result.Decisions = make([]Decision, 0, total)
	sorted := slices.Clone(queues)
	slices.SortStableFunc(sorted, func(a, b workload.Queue) int { return strings.Compare(string(a.ClusterQueue), string(b.ClusterQueue)) })
	for _, q := range sorted {
		cur := &cursor{name: q.ClusterQueue, items: q.Workloads, failed: map[*workload.Shape]*Decision{}}
		if cq, ok := snap.ClusterQueues[q.ClusterQueue]; ok {
			cur.cq = cq
			cur.node = c.tree.ClusterQueue(q.ClusterQueue)
			if cur.node != nil {
				cur.root = cur.node.Root()
			}
		}
		c.advance(cur)
	}
	for c.ready.Len() > 0 {
		cur := heap.Pop(&c.ready).(*cursor)
		if cur.version != c.versions[cur.root] {
			prevLevel := cur.asg.BorrowingLevel
			if !c.evaluateHead(cur) {
				c.advance(cur)
				continue
			}
			if cur.asg.BorrowingLevel > prevLevel && c.ready.Len() > 0 && c.ready.less(c.ready[0], cur) {
				heap.Push(&c.ready, cur)
				continue
			}
		}
		c.admitHead(cur)
		c.advance(cur)
	}
	return c.result
}

// advance decides workloads at the cursor until one fits (then queues the
// cursor for admission) or the queue ends.
func (c *cycle) advance(cur *cursor) {
	for cur.pos < len(cur.items) {
		if c.evaluateHead(cur) {
			heap.Push(&c.ready, cur)
			return
		}
	}
}

// evaluateHead computes the head's assignment. When it fits it returns true;
// otherwise it records the decision, moves past the head (or, for
// StrictFIFO, past the whole queue) and returns false.
func (c *cycle) evaluateHead(cur *cursor) bool {
	w := cur.items[cur.pos]
	if d, ok := c.precheck(cur, w); !ok {
		c.decide(d)
		cur.pos++
		return false
	}
	if prev, ok := cur.failed[w.Shape]; ok {
		c.decide(Decision{Workload: w, Reason: prev.Reason, Message: prev.Message, Assignment: prev.Assignment})
		cur.pos++
		return false
	}
	asg := c.assigner.Assign(cur.cq, cur.node, w.Shape, nil)
	if asg.Mode != flavors.Fit && w.Shape.HasPartialAdmission() {
		if partial, ok := c.assigner.AssignPartial(cur.cq, cur.node, w.Shape); ok {
			asg = partial
		}
	}
	if asg.Mode == flavors.Fit {
		cur.asg = asg
		cur.version = c.versions[cur.root]
		return true
	}
	d := Decision{Workload: w, Reason: Reason(asg.Reason), Message: asg.Message, Assignment: &asg}
	c.decide(d)
	cur.pos++
	if cur.cq.QueueingStrategy == kueue.StrictFIFO {
		c.blockRest(cur, w)
	} else {
		cur.failed[w.Shape] = &d
	}
	return false
}

// precheck refuses workloads whose queue cannot admit them at all.
func (c *cycle) precheck(cur *cursor, w *workload.Info) (Decision, bool) {
	if cur.cq == nil || cur.node == nil {
		return Decision{Workload: w, Reason: ClusterQueueNotFound,
			Message: fmt.Sprintf("ClusterQueue %s doesn't exist", cur.name)}, false
	}
	if in, inactive := c.snap.ClusterQueueInactive(cur.name); inactive {
		return Decision{Workload: w, Reason: ClusterQueueInactive,
			Message: fmt.Sprintf("ClusterQueue %s is inactive: %s", cur.name, in.Message)}, false
	}
	if !c.snap.NamespaceAllowed(cur.cq, w.Key.Namespace) {
		return Decision{Workload: w, Reason: NamespaceMismatch,
			Message: fmt.Sprintf("the namespace %s doesn't match the namespaceSelector of ClusterQueue %s", w.Key.Namespace, cur.name)}, false
	}
	return Decision{}, true
}

// blockRest refuses everything behind a StrictFIFO head that did not fit.
// Workloads whose namespace the queue does not admit are refused for that.
func (c *cycle) blockRest(cur *cursor, head *workload.Info) {
	msg := fmt.Sprintf("waiting behind %s, the head of StrictFIFO ClusterQueue %s, which doesn't fit", head.Key, cur.name)
	for ; cur.pos < len(cur.items); cur.pos++ {
		w := cur.items[cur.pos]
		if d, ok := c.precheck(cur, w); !ok {
			c.decide(d)
			continue
		}
		c.decide(Decision{Workload: w, Reason: BlockedByHead, Message: msg})
	}
}

func (c *cycle) admitHead(cur *cursor) {
	w := cur.items[cur.pos]
	asg := cur.asg
	c.tree.AddUsage(cur.node, asg.Usage)
	c.versions[cur.root]++
	c.decide(Decision{Workload: w, Admit: true, Assignment: &asg})
	c.result.Admitted++
	cur.pos++
}

func (c *cycle) decide(d Decision) { c.result.Decisions = append(c.result.Decisions, d) }
