package hierarchy

import (
	"math/big"

	"github.com/kuota-dev/kuota/internal/resources"
)

// Usage beyond what an amount holds.
//
// The scheduler never admits more than a subtree quota, which is at most
// resources.MaxAmount, but usage recorded from workloads admitted
// elsewhere (or before quotas shrank) can add up to more than an int64.
// A node therefore keeps its usage exactly: what it reads, n.usage, is
// clamped at ±resources.Max, more than any quota, and the rest is kept in
// n.excess. Adding usage and removing it again returns every node's usage
// exactly, whatever was in between. A Cohort's usage is the exact sum of
// what its children draw as they read it, so it does not depend on the
// order of changes either.

// shiftUsage adds delta to n's usage of fr and returns the usage before and
// after, as readers see it.
func (n *Node) shiftUsage(fr FlavorResource, delta Amount) (old, updated Amount) {
	old = n.usage[fr]
	if len(n.excess) == 0 {
		if s := resources.Add(old, delta); s > -resources.Max && s < resources.Max {
			n.setUsage(fr, s)
			return old, s
		}
	}
	return old, n.shiftExact(fr, old, delta)
}

// shiftExact adds delta to the exact usage (the clamped part plus the
// excess) and splits the result again.
func (n *Node) shiftExact(fr FlavorResource, old, delta Amount) Amount {
	total := big.NewInt(old)
	if e := n.excess[fr]; e != nil {
		total.Add(total, e)
	}
	total.Add(total, big.NewInt(delta))
	visible := clampBig(total)
	rest := total.Sub(total, big.NewInt(visible))
	switch {
	case rest.Sign() != 0:
		if n.excess == nil {
			n.excess = map[FlavorResource]*big.Int{}
		}
		n.excess[fr] = rest
	case n.excess != nil:
		delete(n.excess, fr)
	}
	n.setUsage(fr, visible)
	return visible
}

func (n *Node) setUsage(fr FlavorResource, a Amount) {
	if a == 0 {
		delete(n.usage, fr)
	} else {
		n.usage[fr] = a
	}
}

var (
	bigMax    = big.NewInt(resources.Max)
	bigMinNeg = big.NewInt(-resources.Max)
)

// clampBig bounds v to ±resources.Max.
func clampBig(v *big.Int) Amount {
	switch {
	case v.Cmp(bigMax) > 0:
		return resources.Max
	case v.Cmp(bigMinNeg) < 0:
		return -resources.Max
	}
	return v.Int64()
}
