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
// The package is pure: no I/O, no globals, deterministic.
package hierarchy

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Amount is a resource amount in milli-units.
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
	usage    resources.FlavorResourceQuantities
	// explicit is false for a Cohort that no object defines, only references.
	explicit bool
	// broken is true when the node's chain of parents has a cycle.
	broken bool
	// height is 0 for a ClusterQueue and 1 + the largest child height for a
	// Cohort.
	height int
}

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// Kind is the node's kind.
func (n *Node) Kind() Kind { return n.kind }

// Parent returns the parent Cohort, or nil for a root.
func (n *Node) Parent() *Node { return n.parent }

// Tree holds every ClusterQueue and Cohort and their usage.
type Tree struct {
	queues  map[kueue.ClusterQueueReference]*Node
	cohorts map[kueue.CohortReference]*Node
}

// New returns an empty tree.
func New() *Tree {
	return &Tree{
		queues:  map[kueue.ClusterQueueReference]*Node{},
		cohorts: map[kueue.CohortReference]*Node{},
	}
}

func newNode(name string, kind Kind) *Node {
	return &Node{
		name: name, kind: kind,
		children: map[*Node]struct{}{},
		quotas:   Quotas{},
		subtree:  resources.FlavorResourceQuantities{},
		usage:    resources.FlavorResourceQuantities{},
	}
}

// ClusterQueue returns the node of a ClusterQueue, or nil.
func (t *Tree) ClusterQueue(name kueue.ClusterQueueReference) *Node { return t.queues[name] }

// Cohort returns the node of a Cohort (explicit or implicit), or nil.
func (t *Tree) Cohort(name kueue.CohortReference) *Node { return t.cohorts[name] }

// SetClusterQueue adds or updates a ClusterQueue. Its usage is kept.
func (t *Tree) SetClusterQueue(name kueue.ClusterQueueReference, cohort kueue.CohortReference, quotas Quotas) {
	n := t.queues[name]
	if n == nil {
		n = newNode(string(name), ClusterQueueKind)
		t.queues[name] = n
	}
	n.quotas = quotas
	t.setParent(n, cohort)
	t.recompute()
}

// DeleteClusterQueue removes a ClusterQueue and its usage.
func (t *Tree) DeleteClusterQueue(name kueue.ClusterQueueReference) {
	n := t.queues[name]
	if n == nil {
		return
	}
	t.setParent(n, "")
	delete(t.queues, name)
	t.recompute()
}

// SetCohort adds or updates a Cohort object.
func (t *Tree) SetCohort(name kueue.CohortReference, parent kueue.CohortReference, quotas Quotas) {
	n := t.cohortNode(name)
	n.explicit = true
	n.quotas = quotas
	t.setParent(n, parent)
	t.recompute()
}

// DeleteCohort removes a Cohort object. While ClusterQueues or Cohorts still
// name it, it stays as an implicit Cohort with no quota and no parent.
func (t *Tree) DeleteCohort(name kueue.CohortReference) {
	n := t.cohorts[name]
	if n == nil {
		return
	}
	n.explicit = false
	n.quotas = Quotas{}
	t.setParent(n, "")
	t.dropIfUnused(n)
	t.recompute()
}

func (t *Tree) cohortNode(name kueue.CohortReference) *Node {
	n := t.cohorts[name]
	if n == nil {
		n = newNode(string(name), CohortKind)
		t.cohorts[name] = n
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
	delete(t.cohorts, kueue.CohortReference(c.name))
	if c.parent != nil {
		p := c.parent
		delete(p.children, c)
		c.parent = nil
		t.dropIfUnused(p)
	}
}
