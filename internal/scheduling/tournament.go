package scheduling

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/scheduling/fairsharing"
	"github.com/kuota-dev/kuota/internal/state"
)

// tournament is the fair-sharing order of ready ClusterQueues. Cohort
// trees are independent, so they are served one after the other (by root
// name). Within a tree, each Cohort picks among its children's candidates:
// a child that would not borrow first, then the lowest weighted share with
// the candidate's request added, then higher priority, earlier time, name;
// the winner climbs to the root and is processed next.
type tournament struct {
	snap  *state.Snapshot
	ready map[*hierarchy.Node]*cursor // by ClusterQueue node
	roots map[*hierarchy.Node]int     // ready cursors per root
}

func newTournament(snap *state.Snapshot) *tournament {
	return &tournament{snap: snap, ready: map[*hierarchy.Node]*cursor{}, roots: map[*hierarchy.Node]int{}}
}

func (t *tournament) push(cur *cursor) {
	t.ready[cur.node] = cur
	t.roots[cur.root]++
}

func (t *tournament) pop() *cursor {
	if len(t.roots) == 0 {
		return nil
	}
	roots := make([]*hierarchy.Node, 0, len(t.roots))
	for r := range t.roots {
		roots = append(roots, r)
	}
	slices.SortFunc(roots, func(a, b *hierarchy.Node) int {
		if c := cmp.Compare(a.Kind(), b.Kind()); c != 0 {
			return c
		}
		return strings.Compare(a.Name(), b.Name())
	})
	cur := t.best(roots[0])
	delete(t.ready, cur.node)
	if t.roots[cur.root]--; t.roots[cur.root] == 0 {
		delete(t.roots, cur.root)
	}
	return cur
}

// outranked: a re-evaluated head simply goes back into the tournament.
func (t *tournament) outranked(*cursor) bool { return true }

// best returns the winning ready cursor under n, or nil.
func (t *tournament) best(n *hierarchy.Node) *cursor {
	if n.Kind() == hierarchy.ClusterQueueKind {
		return t.ready[n]
	}
	var winner *cursor
	var winnerChild *hierarchy.Node
	for _, child := range n.Children() {
		cand := t.best(child)
		if cand == nil {
			continue
		}
		if winner == nil || t.beats(child, cand, winnerChild, winner) {
			winner, winnerChild = cand, child
		}
	}
	return winner
}

// beats compares two candidates coming from two children of one Cohort.
func (t *tournament) beats(ca *hierarchy.Node, a *cursor, cb *hierarchy.Node, b *cursor) bool {
	wa, wb := a.items[a.pos], b.items[b.pos]
	if wa.Preempting != wb.Preempting {
		return wa.Preempting
	}
	borrowA, borrowB := fairsharing.Borrowing(ca, a.asg.Usage), fairsharing.Borrowing(cb, b.asg.Usage)
	if borrowA != borrowB {
		return !borrowA
	}
	shareA, _ := fairsharing.Share(ca, a.asg.Usage, t.weight(ca))
	shareB, _ := fairsharing.Share(cb, b.asg.Usage, t.weight(cb))
	if shareA != shareB {
		return shareA < shareB
	}
	if wa.Priority != wb.Priority {
		return wa.Priority > wb.Priority
	}
	if wa.QueueOrderTime != wb.QueueOrderTime {
		return wa.QueueOrderTime < wb.QueueOrderTime
	}
	return strings.Compare(string(a.name), string(b.name)) < 0
}

func (t *tournament) weight(n *hierarchy.Node) int64 {
	return fairsharing.Weight(t.snap.ClusterQueues, t.snap.Cohorts, n)
}
