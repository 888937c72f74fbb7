package audit

import (
	"fmt"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// checkQuota builds the cohort tree, adds the usage of every workload
// holding quota and checks every node against its quota and limits. Nodes
// under a cycle of Cohort parents are inactive and not checked.
func checkQuota(wls []*workload, cqs []kueue.ClusterQueue, cohorts []kueue.Cohort) []Violation {
	tree, out := buildTree(cqs, cohorts)
	for _, w := range wls {
		if !w.holding() {
			continue
		}
		if n := tree.ClusterQueue(w.clusterQueue()); n != nil {
			tree.AddUsage(n, w.usage)
		}
	}
	for _, name := range tree.CohortNames() {
		out = append(out, checkNode(tree.Cohort(name))...)
	}
	for _, name := range tree.ClusterQueueNames() {
		out = append(out, checkNode(tree.ClusterQueue(name))...)
	}
	return out
}

// buildTree converts the objects into the quota model; a ClusterQueue or
// Cohort that cannot be converted is reported and left out.
func buildTree(cqs []kueue.ClusterQueue, cohorts []kueue.Cohort) (*hierarchy.Tree, []Violation) {
	tree := hierarchy.New()
	var out []Violation
	for i := range cohorts {
		c, err := state.NewCohort(&cohorts[i])
		if err != nil {
			out = append(out, Violation{KindInvalidObject, "Cohort " + cohorts[i].Name,
				fmt.Sprintf("cannot be audited for quota: %v", err)})
			continue
		}
		tree.SetCohort(c.Name, c.Parent, c.Quotas)
	}
	for i := range cqs {
		cq, err := state.NewClusterQueue(&cqs[i])
		if err != nil {
			out = append(out, Violation{KindInvalidObject, "ClusterQueue " + cqs[i].Name,
				fmt.Sprintf("cannot be audited for quota: %v", err)})
			continue
		}
		tree.SetClusterQueue(cq.Name, cq.Cohort, cq.Quotas)
	}
	return tree, out
}

func nodeObject(n *hierarchy.Node) string {
	if n.Kind() == hierarchy.CohortKind {
		return "Cohort " + n.Name()
	}
	return "ClusterQueue " + n.Name()
}

// checkNode checks one node for every (flavor, resource) it has quota or
// usage for: a root against its subtree quota, a node with a parent and a
// borrowing limit against that limit.
func checkNode(n *hierarchy.Node) []Violation {
	if n == nil || !n.Active() {
		return nil
	}
	var out []Violation
	for _, fr := range n.FlavorResources() {
		if n.Parent() == nil {
			if v, ok := checkRoot(n, fr); ok {
				out = append(out, v)
			}
			continue
		}
		if v, ok := checkBorrowing(n, fr); ok {
			out = append(out, v)
		}
	}
	return out
}

// checkRoot: U(root) <= Q(root). For a ClusterQueue without a cohort, Q is
// its nominal quota.
func checkRoot(n *hierarchy.Node, fr resources.FlavorResource) (Violation, bool) {
	u, q := n.Usage(fr), n.SubtreeQuota(fr)
	if u <= q {
		return Violation{}, false
	}
	show := func(a resources.Amount) string { return formatAmount(fr.Resource, a) }
	if n.Kind() == hierarchy.ClusterQueueKind {
		return Violation{KindNominalQuotaExceeded, nodeObject(n), fmt.Sprintf(
			"without a cohort, uses %s of %s, above its nominal quota %s", show(u), fr, show(q))}, true
	}
	return Violation{KindQuotaExceeded, nodeObject(n), fmt.Sprintf(
		"root cohort: its members draw %s of %s, above the subtree quota %s", show(u), fr, show(q))}, true
}

// checkBorrowing: what n draws from its parent, max(0, U - G), is at most
// what it lends up, Q - G, plus its borrowing limit.
func checkBorrowing(n *hierarchy.Node, fr resources.FlavorResource) (Violation, bool) {
	quota, ok := n.Quota(fr)
	if !ok || quota.BorrowingLimit == resources.Unlimited {
		return Violation{}, false
	}
	u, q := n.Usage(fr), n.SubtreeQuota(fr)
	g := guaranteed(n, fr)
	draw := max(0, resources.Sub(u, g))
	lendable := resources.Sub(q, g)
	limit := resources.Add(lendable, quota.BorrowingLimit)
	if draw <= limit {
		return Violation{}, false
	}
	show := func(a resources.Amount) string { return formatAmount(fr.Resource, a) }
	return Violation{KindBorrowingLimitExceeded, nodeObject(n), fmt.Sprintf(
		"draws %s of %s from Cohort %s (usage %s, guaranteed %s), above its lendable quota %s + borrowingLimit %s = %s",
		show(draw), fr, n.Parent().Name(), show(u), show(g), show(lendable), show(quota.BorrowingLimit), show(limit))}, true
}

// guaranteed is G(n) as package hierarchy defines it (unexported there):
// Q(n) - lendingLimit, floored at 0, when a lending limit is set, else 0.
func guaranteed(n *hierarchy.Node, fr resources.FlavorResource) resources.Amount {
	q, ok := n.Quota(fr)
	if !ok || q.LendingLimit == resources.Unlimited {
		return 0
	}
	return max(0, resources.Sub(n.SubtreeQuota(fr), q.LendingLimit))
}
