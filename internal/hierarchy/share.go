package hierarchy

import (
	"maps"
	"slices"
)

// Sharing between trees.
//
// A node is owned by at most one tree (Node.owner is that tree's token),
// which modifies it in place. A node no tree owns any more is immutable, so
// any number of trees can share it. Freeze gives up the tree's ownership of
// every node it has and returns a view of them; Clone returns a tree that
// shares every node the original does not own. A tree about to modify a
// node it does not own first copies the node's group, every node connected
// to it by parent and child links (one cohort tree), and points its maps at
// the copies. Usage only changes within a group, so a cycle that admits in
// one cohort tree copies that cohort tree only.
//
// Structural changes (queues and cohorts added, moved, deleted, quotas
// changed) recompute the whole tree, so they first take ownership of
// everything; they are rare.

// token identifies an owner; it has a size so that every new one has its
// own address.
type token struct{ _ byte }

// Freeze returns an immutable view of the tree as it is now, in O(1). The
// tree stays writable: it copies a group before its next change there.
// Nodes looked up before Freeze belong to the view from then on: look them
// up again to write.
func (t *Tree) Freeze() *Tree {
	if t.owner == nil {
		return t
	}
	view := &Tree{index: t.index, nodes: t.nodes}
	t.owner = new(token)
	t.indexOwned, t.nodesOwned = false, false
	return view
}

// Frozen reports whether the tree is an immutable view (Freeze).
func (t *Tree) Frozen() bool { return t.owner == nil }

// Clone returns a writable copy, so that a scheduling cycle can add usage
// without touching the original. It shares the original's immutable nodes
// and copies at once only the groups the original owns (none for a frozen
// tree); the copy's lookups copy a group on first access, so the nodes it
// hands out can be written through.
func (t *Tree) Clone() *Tree {
	out := &Tree{index: t.index, nodes: t.nodes, owner: new(token), lookupOwns: true}
	if t.owner == nil {
		return out
	}
	t.indexOwned, t.nodesOwned = false, false
	for _, n := range t.nodes {
		if n != nil && n.owner == t.owner && out.nodes[n.slot].owner != out.owner {
			out.copyGroup(n)
		}
	}
	return out
}

// writable returns the node to modify for n: n itself when the tree owns
// it, otherwise the tree's own copy of it (its group copied first), or nil
// when the tree does not have it.
func (t *Tree) writable(n *Node) *Node {
	if t.owner == nil {
		panic("hierarchy: write to a frozen tree")
	}
	if n.owner == t.owner {
		return n
	}
	if int(n.slot) >= len(t.nodes) {
		return nil
	}
	cur := t.nodes[n.slot]
	if cur == nil || cur.name != n.name || cur.kind != n.kind {
		return nil
	}
	if cur.owner != t.owner {
		t.copyGroup(cur)
		cur = t.nodes[n.slot]
	}
	return cur
}

// ownAll makes the index and every node of the tree its own, before a
// structural change.
func (t *Tree) ownAll() {
	if t.owner == nil {
		panic("hierarchy: write to a frozen tree")
	}
	if !t.indexOwned {
		t.index = &index{queues: maps.Clone(t.index.queues), cohorts: maps.Clone(t.index.cohorts)}
		t.indexOwned = true
	}
	t.ownNodes()
	for _, n := range t.nodes {
		if n != nil && t.nodes[n.slot].owner != t.owner {
			t.copyGroup(n)
		}
	}
}

// ownNodes makes the tree's slice of nodes its own.
func (t *Tree) ownNodes() {
	if !t.nodesOwned {
		t.nodes = slices.Clone(t.nodes)
		t.nodesOwned = true
	}
}

// copyGroup replaces every node connected to start with a copy the tree
// owns.
func (t *Tree) copyGroup(start *Node) {
	t.ownNodes()
	copies := map[*Node]*Node{start: nil}
	stack := []*Node{start}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		copies[n] = &Node{
			name: n.name, kind: n.kind, explicit: n.explicit, broken: n.broken, height: n.height,
			quotas:  n.quotas,  // replaced, never modified in place
			subtree: n.subtree, // replaced, never modified in place
			usage:   n.usage.Clone(),
			excess:  maps.Clone(n.excess), // values replaced, never modified in place
			owner:   t.owner,
			slot:    n.slot,
		}
		visit := func(m *Node) {
			if _, seen := copies[m]; !seen {
				copies[m] = nil
				stack = append(stack, m)
			}
		}
		if n.parent != nil {
			visit(n.parent)
		}
		for c := range n.children {
			visit(c)
		}
	}
	for orig, c := range copies {
		if orig.parent != nil {
			c.parent = copies[orig.parent]
		}
		c.children = make(map[*Node]struct{}, len(orig.children))
		for child := range orig.children {
			c.children[copies[child]] = struct{}{}
		}
		t.nodes[c.slot] = c
	}
}
