package hierarchy

import (
	"maps"
	"slices"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// check records the operation and verifies properties (a)-(d) described in
// property_test.go.
func (tr *propTrace) check(desc string, kind opKind) {
	tr.t.Helper()
	tr.log = append(tr.log, desc)
	if kind == opStructure {
		tr.structural = true
	}
	ref := buildRef(tr.spec)
	tr.checkStructure(ref)
	tr.checkFresh(ref)
	if kind == opUsage {
		for _, e := range tr.excess {
			if e > 0 {
				tr.stats.dirtyUsageOps++
				break
			}
		}
	}
	excess := map[string]Amount{}
	for _, fr := range tr.spec.frs {
		v := ref.values(fr, nil, 0)
		v0 := ref.valuesOf(ref.fr(fr), ref.fr(fr).zero, nil, 0, nil)
		for _, n := range ref.all {
			if n.broken {
				tr.stats.brokenNodes++
				tr.checkBroken(n, fr)
				continue
			}
			tr.checkNode(ref, n, fr, v, v0)
			key := nodeKey(n, fr)
			e := v.excess(n, fr)
			excess[key] = e
			if e > 0 && !tr.structural {
				tr.fail("%s exceeds its limit on %s by %d although only guarded additions and removals happened (U=%d Q=%d G=%d)",
					n.name, fr, e, v.u[n.idx], v.q[n.idx], v.g[n.idx])
			}
			if e > tr.excess[key] && kind == opUsage {
				tr.fail("%s's excess over its limit on %s grew from %d to %d by a usage change (U=%d Q=%d G=%d)",
					n.name, fr, tr.excess[key], e, v.u[n.idx], v.q[n.idx], v.g[n.idx])
			}
		}
		msg, ok, checks := ref.lendingCheck(fr, v)
		tr.stats.lendingChecks += checks
		if !ok {
			tr.fail("%s", msg)
		}
	}
	tr.excess = excess
}

// checkStructure compares the tree's nodes, parents and Active with the
// reference.
func (tr *propTrace) checkStructure(ref *refTree) {
	tr.t.Helper()
	wantCohorts := slices.Sorted(maps.Keys(ref.cohorts))
	var gotCohorts []string
	for _, c := range tr.tree.CohortNames() {
		gotCohorts = append(gotCohorts, string(c))
	}
	if !slices.Equal(gotCohorts, wantCohorts) {
		tr.fail("Cohorts = %v, want %v (explicit ones plus those referenced)", gotCohorts, wantCohorts)
	}
	var gotCQs []string
	for _, q := range tr.tree.ClusterQueueNames() {
		gotCQs = append(gotCQs, string(q))
	}
	if want := slices.Sorted(maps.Keys(ref.cqs)); !slices.Equal(gotCQs, want) {
		tr.fail("ClusterQueues = %v, want %v", gotCQs, want)
	}
	for _, n := range ref.all {
		node := tr.node(n)
		if node == nil {
			tr.fail("node %s missing", n.name)
		}
		gotParent, wantParent := "", ""
		if node.Parent() != nil {
			gotParent = node.Parent().Name()
		}
		if n.parent != nil {
			wantParent = n.parent.name
		}
		if gotParent != wantParent {
			tr.fail("parent of %s = %q, want %q", n.name, gotParent, wantParent)
		}
		if node.Active() == n.broken {
			tr.fail("%s: Active() = %v, but under a cycle = %v", n.name, node.Active(), n.broken)
		}
	}
}

// checkFresh compares the incremental tree with one built from scratch.
// SubtreeQuota is not compared under a cycle, where it means nothing.
func (tr *propTrace) checkFresh(ref *refTree) {
	tr.t.Helper()
	fresh := tr.spec.freshTree()
	for _, n := range ref.all {
		node := tr.node(n)
		var fn *Node
		if n.isCQ {
			fn = fresh.ClusterQueue(kueue.ClusterQueueReference(n.name))
		} else {
			fn = fresh.Cohort(kueue.CohortReference(n.name))
		}
		if fn == nil {
			tr.fail("fresh tree has no node %s", n.name)
		}
		if fn.Active() != node.Active() {
			tr.fail("%s: Active() = %v, from scratch %v", n.name, node.Active(), fn.Active())
		}
		for _, fr := range tr.spec.frs {
			if got, want := node.Usage(fr), fn.Usage(fr); got != want {
				tr.fail("%s: Usage(%s) = %d, from scratch %d", n.name, fr, got, want)
			}
			if got, want := node.Available(fr), fn.Available(fr); got != want {
				tr.fail("%s: Available(%s) = %d, from scratch %d", n.name, fr, got, want)
			}
			if got, want := node.PotentialAvailable(fr), fn.PotentialAvailable(fr); got != want {
				tr.fail("%s: PotentialAvailable(%s) = %d, from scratch %d", n.name, fr, got, want)
			}
			if n.broken {
				continue
			}
			if got, want := node.SubtreeQuota(fr), fn.SubtreeQuota(fr); got != want {
				tr.fail("%s: SubtreeQuota(%s) = %d, from scratch %d", n.name, fr, got, want)
			}
		}
	}
}

// checkBroken: a node under a cycle is inactive and offers nothing (d).
func (tr *propTrace) checkBroken(n *refNode, fr FlavorResource) {
	tr.t.Helper()
	node := tr.node(n)
	if a, p := node.Available(fr), node.PotentialAvailable(fr); a != 0 || p != 0 {
		tr.fail("%s is under a cycle but Available(%s) = %d, PotentialAvailable = %d", n.name, fr, a, p)
	}
}

// checkNode compares one active node with the reference (a, b, c).
func (tr *propTrace) checkNode(ref *refTree, n *refNode, fr FlavorResource, v, v0 refVals) {
	tr.t.Helper()
	node := tr.node(n)
	i := n.idx
	if got := node.Usage(fr); got != v.u[i] {
		tr.fail("%s: Usage(%s) = %d, reference %d", n.name, fr, got, v.u[i])
	}
	if got := node.SubtreeQuota(fr); got != v.q[i] {
		tr.fail("%s: SubtreeQuota(%s) = %d, reference %d", n.name, fr, got, v.q[i])
	}
	a, p := node.Available(fr), node.PotentialAvailable(fr)
	if want := v.available(n, fr); a != want {
		tr.fail("%s: Available(%s) = %d, reference %d", n.name, fr, a, want)
	}
	if want := v0.available(n, fr); p != want {
		tr.fail("%s: PotentialAvailable(%s) = %d, reference %d", n.name, fr, p, want)
	}
	if a > p {
		tr.fail("%s: Available(%s) = %d > PotentialAvailable %d", n.name, fr, a, p)
	}
	if !n.isCQ {
		return
	}
	if bf := ref.bruteAvailable(n, fr, false); bf < 0 {
		tr.fail("%s: brute force found no upper bound for %s", n.name, fr)
	} else if bf != max(0, a) {
		tr.fail("%s: Available(%s) = %d, but the largest amount that can be added without breaking a limit is %d", n.name, fr, a, bf)
	}
	if bp := ref.bruteAvailable(n, fr, true); bp != p {
		tr.fail("%s: PotentialAvailable(%s) = %d, but with no usage at all the largest amount that fits is %d", n.name, fr, p, bp)
	}
	if n.parent != nil {
		if own := max(0, v.g[i]-v.u[i]); a < own {
			tr.fail("%s: Available(%s) = %d is less than its unused guaranteed quota %d (lending limit)", n.name, fr, a, own)
		}
	}
}
