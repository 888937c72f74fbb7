// Package fairsharing computes the dominant resource share (DRS) of queues
// and cohorts and orders candidates by it, so that ClusterQueues and Cohorts
// sharing a parent get quota in proportion to their fairSharing weights.
//
// The share of a node is taken over what it borrows: for every resource,
// what it uses beyond its own subtree quota (over all flavors), divided by
// what its parent could lend it at most; the dominant (largest) ratio, in
// per mille, divided by the node's weight, is its weighted share. A node that
// borrows nothing has share 0; a node of weight 0 that borrows has an
// infinite share. Shares are compared exactly (as floating point numbers);
// status publishes them rounded down to integers (math.MaxInt64 for
// infinite). It is pure.
package fairsharing

import (
	"maps"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Infinite is the published weighted share of a weight-0 node that borrows.
const Infinite int64 = math.MaxInt64

// Weights gives the fair-sharing weight of a node, in milli-units (1000 = 1).
type Weights func(n *hierarchy.Node) resources.Amount

// Share returns the weighted share of n with extra usage added (nil for
// none), and the dominant resource. It is +Inf for a weight-0 node that
// borrows.
func Share(n *hierarchy.Node, extra resources.FlavorResourceQuantities, weight resources.Amount) (float64, corev1.ResourceName) {
	parent := n.Parent()
	if parent == nil || !n.Active() {
		return 0, ""
	}
	borrowed := map[corev1.ResourceName]resources.Amount{}
	add := func(fr resources.FlavorResource) {
		b := resources.Sub(resources.Add(n.Usage(fr), extra[fr]), n.SubtreeQuota(fr))
		if b > 0 {
			borrowed[fr.Resource] = resources.Add(borrowed[fr.Resource], b)
		}
	}
	known := n.FlavorResources()
	for _, fr := range known {
		add(fr)
	}
	for fr := range extra {
		if !slices.Contains(known, fr) {
			add(fr)
		}
	}
	if len(borrowed) == 0 {
		return 0, ""
	}
	lendable := lendableOf(parent)
	var share float64
	var dominant corev1.ResourceName
	for _, name := range sortedNames(borrowed) {
		// A resource the parent cannot lend does not count, as in Kueue.
		l := lendable[name]
		if l <= 0 {
			continue
		}
		if ratio := float64(borrowed[name]) * 1000 / float64(l); ratio > share || dominant == "" {
			share, dominant = ratio, name
		}
	}
	if dominant == "" {
		return 0, ""
	}
	if weight <= 0 {
		return math.Inf(1), dominant
	}
	return share * float64(resources.One) / float64(weight), dominant
}

// Published converts a share to the integer that status and metrics show:
// rounded down, math.MaxInt64 when infinite.
func Published(share float64) int64 {
	if math.IsInf(share, 1) || share >= float64(Infinite) {
		return Infinite
	}
	return int64(math.Floor(share))
}

// lendableOf sums, per resource, what the parent could lend at most.
func lendableOf(parent *hierarchy.Node) map[corev1.ResourceName]resources.Amount {
	out := map[corev1.ResourceName]resources.Amount{}
	for _, fr := range parent.FlavorResources() {
		out[fr.Resource] = resources.Add(out[fr.Resource], parent.PotentialAvailable(fr))
	}
	return out
}

func sortedNames(m map[corev1.ResourceName]resources.Amount) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(m))
}

func dominantName(m map[corev1.ResourceName]resources.Amount) corev1.ResourceName {
	return sortedNames(m)[0]
}

// Borrowing reports whether n would use more than its subtree quota of any
// (flavor, resource) of extra once extra is added.
func Borrowing(n *hierarchy.Node, extra resources.FlavorResourceQuantities) bool {
	for fr, a := range extra {
		if resources.Add(n.Usage(fr), a) > n.SubtreeQuota(fr) {
			return true
		}
	}
	return false
}
