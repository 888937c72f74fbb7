package scheduling

import (
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
	"github.com/kuota-dev/kuota/internal/workload"
)

// cycle is the working state of one Decide call.
type cycle struct {
	snap     *state.Snapshot
	tree     *hierarchy.Tree
	assigner *flavors.Assigner
	// finder searches victims in the "future" tree: the working tree with
	// the victims chosen so far already gone. It is made at the first
	// search, so that cycles without preemption do not pay for it.
	finder   *preemption.Finder
	future   *hierarchy.Tree
	popts    preemption.Options
	opts     Options
	versions map[*hierarchy.Node]uint64
	// topologies are the cycle's working copies of the TAS flavors'
	// trees, cloned at first use (workTree).
	topologies map[kueue.ResourceFlavorReference]*tas.Tree
	// placed lists the cycle's placements, for preemption searches that
	// rebuild trees (topology_preempt.go).
	placed []placedUse
	result Result
	ready  order
	late   lateness
}

// order hands out the ClusterQueues whose head is ready (fits or can
// preempt): by borrowing level, priority and time (classic), or by share
// within each cohort tree (fair sharing).
type order interface {
	push(cur *cursor)
	pop() *cursor
	// outranked reports whether another ready cursor now goes before cur.
	outranked(cur *cursor) bool
}

// cursor walks one ClusterQueue's pending workloads.
type cursor struct {
	name  kueue.ClusterQueueReference
	cq    *state.ClusterQueue
	node  *hierarchy.Node
	root  *hierarchy.Node
	items []*workload.Info
	pos   int
	// namespaces lists the distinct namespaces of items, when known.
	namespaces []string
	// failed remembers the decisions of shapes that could not be admitted,
	// for BestEffortFIFO: usage only grows during a cycle and victims only
	// get scarcer, so later workloads of the same shape (and, when the
	// failure was a lack of victims, no higher priority) fail too.
	// Values are indexes in Result.Decisions; failures that depend on
	// priority are kept per shape in the order they happened, and the
	// earliest that applies is used.
	failed         map[failKey]int
	failedPriority map[*workload.Shape][]priorityFailure
	// head's assignment and the root version it was computed at.
	asg     flavors.Assignment
	version uint64
	// searchFailed is set once a preemption search in this queue found no
	// victims: the tree is short of them for the rest of the cycle, so
	// further searches in the queue wait for the next cycle.
	searchFailed bool
	// noQuotaMessage is the message of the workloads that wait unevaluated
	// once searchFailed is set, built once.
	noQuotaMessage string
	// holders are the shapes of workloads that hold quota this cycle
	// (Decision.BehindHolder).
	holders map[*workload.Shape]bool
	// full caches noFreeQuota at fullVersion of the root.
	full, fullChecked bool
	fullVersion       uint64
}

type failKey struct {
	shape    *workload.Shape
	priority int32
}

type priorityFailure struct {
	priority int32
	decision int
}

// noPriority keys failures that do not depend on priority; deferredKey
// keys shapes whose preemption search was deferred (they needed preemption
// after the queue's search failed; usage only grows, so they still would).
const (
	noPriority  = int32(-1 << 31)
	deferredKey = noPriority + 1
)

// Decide runs one scheduling cycle. queues hold each ClusterQueue's pending
// workloads in queue order. Every workload that fits is admitted, in order:
// across ClusterQueues, heads that fit without borrowing go first, then by
// priority and queue-order time (or by share, under fair sharing); within a
// queue, StrictFIFO stops at the first workload that does not fit (the rest
// is reported blocked, in one Blocked summary) and BestEffortFIFO skips it. A workload that fits only by preempting others
// gets victims that no other workload of the cycle gets, and the quota it
// needs is held for it for the rest of the cycle. The snapshot is not
// modified.
func Decide(snap *state.Snapshot, queues []workload.Queue, opts Options) Result {
	return DecideInto(nil, snap, queues, opts)
}

// DecideInto is Decide with the decisions written into buf's memory (its
// length is ignored): buf is the Decisions of an earlier Result that the
// caller no longer reads. A loop that decides cycle after cycle then
// allocates the decisions, one per pending workload, once rather than in
// every cycle, where they were a third of the manager's allocations on the
// baseline benchmark.
func DecideInto(buf []Decision, snap *state.Snapshot, queues []workload.Queue, opts Options) Result {
	tree := snap.Tree.Clone()
	popts := preemption.Options{}
	if opts.FairSharing != nil {
		opts.Flavors.FairSharing = true
		popts = preemption.Options{FairSharing: true, Strategies: opts.FairSharing.Strategies}
	}
	c := &cycle{
		snap:     snap,
		tree:     tree,
		assigner: flavors.NewAssigner(snap.Flavors, opts.Flavors),
		popts:    popts,
		opts:     opts,
		versions: map[*hierarchy.Node]uint64{},
	}
	if opts.FairSharing != nil {
		c.ready = newTournament(snap)
	} else {
		c.ready = &cursorHeap{}
	}
	total := 0
	for _, q := range queues {
		if cq := snap.ClusterQueues[q.ClusterQueue]; cq != nil && cq.QueueingStrategy == kueue.StrictFIFO {
			total += min(len(q.Workloads), 8) // the rest is usually blocked
		} else {
			total += len(q.Workloads)
		}
	}
	if cap(buf) >= total {
		c.result.Decisions = buf[:0]
	} else {
		c.result.Decisions = make([]Decision, 0, total)
	}
	sorted := slices.Clone(queues)
	slices.SortStableFunc(sorted, func(a, b workload.Queue) int { return strings.Compare(string(a.ClusterQueue), string(b.ClusterQueue)) })
	for _, q := range sorted {
		c.advance(c.newCursor(q))
	}
	for cur := c.ready.pop(); cur != nil; cur = c.ready.pop() {
		c.process(cur)
	}
	return c.result
}

func (c *cycle) newCursor(q workload.Queue) *cursor {
	cur := &cursor{name: q.ClusterQueue, items: q.Workloads, namespaces: q.Namespaces}
	if cq, ok := c.snap.ClusterQueues[q.ClusterQueue]; ok {
		cur.cq = cq
		cur.node = c.tree.ClusterQueue(q.ClusterQueue)
		if cur.node != nil {
			cur.root = cur.node.Root()
		}
	}
	return cur
}

// addUsage adds usage to the working tree and, once it exists, the future
// tree.
func (c *cycle) addUsage(cur *cursor, usage resources.FlavorResourceQuantities) {
	c.tree.AddUsage(cur.node, usage)
	if c.future != nil {
		c.future.AddUsage(c.future.ClusterQueue(cur.name), usage)
	}
	c.versions[cur.root]++
}

// victimFinder returns the cycle's Finder, creating it and the future tree
// on first use.
func (c *cycle) victimFinder() *preemption.Finder {
	if c.finder == nil {
		c.future = c.tree.Clone()
		c.finder = preemption.NewFinder(c.snap, c.future, c.popts)
	}
	return c.finder
}

// process admits, or finds victims for, the head of a ready queue.
func (c *cycle) process(cur *cursor) {
	if cur.version != c.versions[cur.root] {
		prevLevel := cur.asg.BorrowingLevel
		if !c.evaluateHead(cur) {
			c.advance(cur)
			return
		}
		if cur.asg.BorrowingLevel > prevLevel && c.ready.outranked(cur) {
			c.ready.push(cur)
			return
		}
	}
	if cur.asg.Mode == flavors.Fit {
		c.admitHead(cur)
	} else {
		c.preemptForHead(cur)
	}
	c.advance(cur)
}

// advance decides workloads at the cursor until one is ready (then queues
// the cursor) or the queue ends.
func (c *cycle) advance(cur *cursor) {
	for cur.pos < len(cur.items) {
		if c.evaluateHead(cur) {
			c.ready.push(cur)
			return
		}
	}
}
