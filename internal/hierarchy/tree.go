// Package hierarchy models the cohort tree that quota flows through:
// ClusterQueues are leaves, Cohorts are inner nodes, and every node may have
// nominal quota, a borrowing limit toward its parent and a lending limit.
//
// Per (flavor, resource) and node n:
//
//	Q(n)  subtree quota: n's nominal quota plus what each child lends up,
//	      lent(c) = Q(c) - G(c).
//	G(n)  guaranteed quota: the part of Q(n) kept for n's subtree alone,
//	      Q(n) - lendingLimit(n) (floored at 0) when a lending limit is set,
//	      otherwise 0.
//	U(n)  usage: for a ClusterQueue, what its admitted workloads use; for a
//	      Cohort, the sum over children of what they use beyond their
//	      guaranteed quota, max(0, U(c) - G(c)).
//
// What a ClusterQueue can still obtain is what is left of its guaranteed
// quota plus what its parent can give it, capped by its borrowing limit, and
// so on up to the root, where it is Q(root) - U(root). Usage rolls up the tree
// incrementally, so a fit check costs O(depth), not O(workloads).
//
// Sums never turn a finite quota into "no limit" (resources.Unlimited,
// which stands only for an unset limit): Q(n) is capped at
// resources.MaxAmount, the most one quantity can hold (quota beyond it is
// not counted, so not lent), Available and PotentialAvailable are too, and
// usage is kept exactly however large it grows (usage.go), so releasing
// what was added returns every node's usage exactly.
//
// Trees share what they can (share.go): Freeze hands out an immutable view
// in O(1), Clone a writable copy that copies a group of connected nodes
// (one cohort tree) only when it is written, so a scheduling cycle pays for
// the cohort trees it touches, not for the whole cluster.
//
// The package is pure: no I/O, no globals, deterministic.
package hierarchy

import (
	"math/big"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Amount is a resource amount in the resource's unit (resources.Unit).
type Amount = resources.Amount

// FlavorResource names a unit of quota.
type FlavorResource = resources.FlavorResource

// Quota is the quota of one (flavor, resource) at one node.
type Quota struct {
	Nominal Amount
	// BorrowingLimit caps how much beyond its own subtree quota the node may
	// take from its parent; resources.Unlimited when unset.
	BorrowingLimit Amount
	// LendingLimit caps how much of its subtree quota the node lends to its
	// parent; resources.Unlimited when unset (lend everything).
	LendingLimit Amount
}

// NominalOnly returns a quota with no limits.
func NominalOnly(nominal Amount) Quota {
	return Quota{Nominal: nominal, BorrowingLimit: resources.Unlimited, LendingLimit: resources.Unlimited}
}

// Quotas maps (flavor, resource) to a quota.
type Quotas map[FlavorResource]Quota

// Kind says whether a node is a ClusterQueue or a Cohort.
type Kind uint8

const (
	// ClusterQueueKind is a leaf.
	ClusterQueueKind Kind = iota
	// CohortKind is an inner node.
	CohortKind
)

// Node is a ClusterQueue or a Cohort in the tree.
type Node struct {
	name     string
	kind     Kind
	parent   *Node
	children map[*Node]struct{}
	quotas   Quotas
	subtree  resources.FlavorResourceQuantities
	// usage is U(n), clamped at ±resources.Max; excess holds what goes
	// beyond (usage.go), nil almost always.
	usage  resources.FlavorResourceQuantities
	excess map[FlavorResource]*big.Int
	// explicit is false for a Cohort that no object defines, only references.
	explicit bool
	// broken is true when the node's chain of parents has a cycle.
	broken bool
	// height is 0 for a ClusterQueue and 1 + the largest child height for a
	// Cohort.
	height int
	// owner is the token of the tree that may modify the node in place;
	// a node no tree owns is shared and immutable (share.go).
	owner *token
	// slot is the node's index in Tree.nodes, the same in every tree that
	// shares the index.
	slot int32
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Kind is the node's kind.
func (n *Node) Kind() Kind { return n.kind }

// Parent returns the parent Cohort, or nil for a root.
func (n *Node) Parent() *Node { return n.parent }

// Tree holds every ClusterQueue and Cohort and their usage.
type Tree struct {
	// index maps names to slots of nodes. Trees share it until a
	// structural change (indexOwned).
	index      *index
	indexOwned bool
	// nodes holds the nodes by slot (nil for a node deleted). Trees share
	// it until they copy a node (nodesOwned).
	nodes      []*Node
	nodesOwned bool
	// owner marks the nodes the tree may modify in place; nil for a frozen
	// tree, which is never modified.
	owner *token
	// lookupOwns makes lookups copy a shared node's group first, so that
	// the node handed out can be written through (working copies).
	lookupOwns bool
}

type index struct {
	queues  map[kueue.ClusterQueueReference]int32
	cohorts map[kueue.CohortReference]int32
}

// New returns an empty tree.
func New() *Tree {
	return &Tree{
		index:      &index{queues: map[kueue.ClusterQueueReference]int32{}, cohorts: map[kueue.CohortReference]int32{}},
		indexOwned: true,
		nodesOwned: true,
		owner:      new(token),
	}
}

// queue and cohort look a node up without copying anything.
func (t *Tree) queue(name kueue.ClusterQueueReference) *Node {
	if i, ok := t.index.queues[name]; ok {
		return t.nodes[i]
	}
	return nil
}

func (t *Tree) cohort(name kueue.CohortReference) *Node {
	if i, ok := t.index.cohorts[name]; ok {
		return t.nodes[i]
	}
	return nil
}

// add gives a new node a slot; the tree owns its index and nodes.
func (t *Tree) add(name string, kind Kind) *Node {
	n := &Node{
		name: name, kind: kind,
		children: map[*Node]struct{}{},
		quotas:   Quotas{},
		subtree:  resources.FlavorResourceQuantities{},
		usage:    resources.FlavorResourceQuantities{},
		owner:    t.owner,
		slot:     int32(len(t.nodes)),
	}
	t.nodes = append(t.nodes, n)
	if kind == ClusterQueueKind {
		t.index.queues[kueue.ClusterQueueReference(name)] = n.slot
	} else {
		t.index.cohorts[kueue.CohortReference(name)] = n.slot
	}
	return n
}

// remove frees a node's slot; the tree owns its index and nodes.
func (t *Tree) remove(n *Node) {
	if n.kind == ClusterQueueKind {
		delete(t.index.queues, kueue.ClusterQueueReference(n.name))
	} else {
		delete(t.index.cohorts, kueue.CohortReference(n.name))
	}
	t.nodes[n.slot] = nil
}

// ClusterQueue returns the node of a ClusterQueue, or nil. On a working
// copy (Clone) the node can be written through; on another tree it may be
// a shared node, to read only: pass it to AddUsage or RemoveUsage right
// away, and look it up again after a Freeze.
func (t *Tree) ClusterQueue(name kueue.ClusterQueueReference) *Node {
	return t.lookup(t.queue(name))
}

// Cohort returns the node of a Cohort (explicit or implicit), or nil, as
// ClusterQueue does.
func (t *Tree) Cohort(name kueue.CohortReference) *Node {
	return t.lookup(t.cohort(name))
}

func (t *Tree) lookup(n *Node) *Node {
	if n != nil && t.lookupOwns && n.owner != t.owner {
		t.copyGroup(n)
		n = t.nodes[n.slot]
	}
	return n
}

// SetClusterQueue adds or updates a ClusterQueue. Its usage is kept.
func (t *Tree) SetClusterQueue(name kueue.ClusterQueueReference, cohort kueue.CohortReference, quotas Quotas) {
	t.ownAll()
	n := t.queue(name)
	if n == nil {
		n = t.add(string(name), ClusterQueueKind)
	}
	n.quotas = quotas
	t.setParent(n, cohort)
	t.recompute()
}

// DeleteClusterQueue removes a ClusterQueue and its usage.
func (t *Tree) DeleteClusterQueue(name kueue.ClusterQueueReference) {
	if t.queue(name) == nil {
		return
	}
	t.ownAll()
	n := t.queue(name)
	t.setParent(n, "")
	t.remove(n)
	t.recompute()
}

// SetCohort adds or updates a Cohort object.
func (t *Tree) SetCohort(name kueue.CohortReference, parent kueue.CohortReference, quotas Quotas) {
	t.ownAll()
	n := t.cohortNode(name)
	n.explicit = true
	n.quotas = quotas
	t.setParent(n, parent)
	t.recompute()
}

// DeleteCohort removes a Cohort object. While ClusterQueues or Cohorts still
// name it, it stays as an implicit Cohort with no quota and no parent.
func (t *Tree) DeleteCohort(name kueue.CohortReference) {
	if t.cohort(name) == nil {
		return
	}
	t.ownAll()
	n := t.cohort(name)
	n.explicit = false
	n.quotas = Quotas{}
	t.setParent(n, "")
	t.dropIfUnused(n)
	t.recompute()
}

func (t *Tree) cohortNode(name kueue.CohortReference) *Node {
	n := t.cohort(name)
	if n == nil {
		n = t.add(string(name), CohortKind)
	}
	return n
}

// setParent moves n under the named Cohort ("" for none), creating an
// implicit Cohort when needed and dropping implicit Cohorts left empty.
func (t *Tree) setParent(n *Node, parent kueue.CohortReference) {
	old := n.parent
	if old != nil && parent != "" && old.name == string(parent) {
		return
	}
	if old != nil {
		delete(old.children, n)
		n.parent = nil
		t.dropIfUnused(old)
	}
	if parent != "" {
		p := t.cohortNode(parent)
		p.children[n] = struct{}{}
		n.parent = p
	}
}

func (t *Tree) dropIfUnused(c *Node) {
	if c.explicit || len(c.children) > 0 {
		return
	}
	t.remove(c)
	if c.parent != nil {
		p := c.parent
		delete(p.children, c)
		c.parent = nil
		t.dropIfUnused(p)
	}
}
