package hierarchy

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Tests of the cohort tree near the limits of an int64, against a
// reference in math/big integers (limitsRef) written from the package
// comment: Q capped at resources.MaxAmount, usage exact and read clamped
// at ±resources.Max, Available and PotentialAvailable capped at
// resources.MaxAmount, and nothing finite ever Unlimited.

var memory = FlavorResource{Flavor: "default", Resource: corev1.ResourceMemory}

func mustAmount(t *testing.T, name corev1.ResourceName, s string) Amount {
	t.Helper()
	a, err := resources.FromQuantity(name, resource.MustParse(s))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestIssue53FivePlusFivePebibytes is the reproduction of issue 53: two
// ClusterQueues of 5Pi of memory in one cohort. The cohort's quota is
// 10Pi; with 5Pi used by one, the other cannot get 6Pi; after the release
// the cohort is back to 10Pi with no usage.
func TestIssue53FivePlusFivePebibytes(t *testing.T) {
	fivePi, sixPi, tenPi := mustAmount(t, "memory", "5Pi"), mustAmount(t, "memory", "6Pi"), mustAmount(t, "memory", "10Pi")
	tree := New()
	tree.SetClusterQueue("a", "storage", Quotas{memory: NominalOnly(fivePi)})
	tree.SetClusterQueue("b", "storage", Quotas{memory: NominalOnly(fivePi)})
	cohort := tree.Cohort("storage")
	if got := cohort.SubtreeQuota(memory); got != tenPi {
		t.Fatalf("cohort quota = %d, want 10Pi = %d (Unlimited is %d)", got, tenPi, resources.Unlimited)
	}
	used := resources.FlavorResourceQuantities{memory: fivePi}
	tree.AddUsage(tree.ClusterQueue("a"), used)
	b := tree.ClusterQueue("b")
	if got := b.Available(memory); got != fivePi {
		t.Errorf("b can obtain %d, want 5Pi = %d", got, fivePi)
	}
	if _, fits := b.BorrowingLevel(memory, sixPi); fits {
		t.Error("6Pi fits in b: 11Pi on a cohort of 10Pi")
	}
	if _, fits := b.BorrowingLevel(memory, fivePi); !fits {
		t.Error("5Pi does not fit in b")
	}
	tree.RemoveUsage(tree.ClusterQueue("a"), used)
	cohort = tree.Cohort("storage")
	if q, u := cohort.SubtreeQuota(memory), cohort.Usage(memory); q != tenPi || u != 0 {
		t.Errorf("after the release the cohort has quota %d and usage %d, want %d and 0", q, u, tenPi)
	}
}

// TestQuotaSumsAreCappedNotUnlimited: quotas that add up to more than an
// int64 holds make a cohort quota of MaxAmount, finite; what a queue can
// obtain is finite too.
func TestQuotaSumsAreCappedNotUnlimited(t *testing.T) {
	tree := New()
	for i := 0; i < 5; i++ {
		tree.SetClusterQueue(kueue.ClusterQueueReference(fmt.Sprintf("q%d", i)), "all", Quotas{memory: NominalOnly(resources.MaxAmount)})
	}
	if got := tree.Cohort("all").SubtreeQuota(memory); got != resources.MaxAmount {
		t.Errorf("cohort quota = %d, want the cap %d", got, resources.MaxAmount)
	}
	q0 := tree.ClusterQueue("q0")
	if a, p := q0.Available(memory), q0.PotentialAvailable(memory); a != resources.MaxAmount || p != resources.MaxAmount {
		t.Errorf("Available %d, PotentialAvailable %d, want both %d", a, p, resources.MaxAmount)
	}
	if _, fits := q0.BorrowingLevel(memory, resources.Max); fits {
		t.Error("a clamped request (Max) fits")
	}
}

// TestUsageBeyondAnInt64ReturnsExactly: usage recorded beyond what an
// int64 holds reads as Max, and removing it returns every node to zero.
func TestUsageBeyondAnInt64ReturnsExactly(t *testing.T) {
	tree := New()
	tree.SetClusterQueue("a", "all", Quotas{memory: NominalOnly(resources.MaxAmount)})
	tree.SetClusterQueue("b", "all", Quotas{memory: NominalOnly(resources.MaxAmount)})
	big := resources.FlavorResourceQuantities{memory: resources.MaxAmount}
	for i := 0; i < 5; i++ {
		tree.AddUsage(tree.ClusterQueue("a"), big)
	}
	tree.AddUsage(tree.ClusterQueue("b"), big)
	if got := tree.ClusterQueue("a").Usage(memory); got != resources.Max {
		t.Errorf("usage of 5 x MaxAmount reads %d, want Max", got)
	}
	view := tree.Freeze()
	work := view.Clone()
	for i := 0; i < 5; i++ {
		work.RemoveUsage(work.ClusterQueue("a"), big)
	}
	work.RemoveUsage(work.ClusterQueue("b"), big)
	for _, n := range []*Node{work.ClusterQueue("a"), work.ClusterQueue("b"), work.Cohort("all")} {
		if u := n.Usage(memory); u != 0 {
			t.Errorf("%s: usage %d after the release, want 0", n.Name(), u)
		}
	}
	if got := view.ClusterQueue("a").Usage(memory); got != resources.Max {
		t.Errorf("the frozen view changed: %d", got)
	}
}

// limitsSpec is one random tree: a root Cohort, sub-Cohorts, ClusterQueues
// under either, one (flavor, resource).
type limitsSpec struct {
	cohorts map[string]string // name -> parent ("" for the root)
	cqs     map[string]string // name -> cohort
	quotas  map[string]Quota
	usage   map[string]*big.Int // exact, per ClusterQueue
}

// near draws amounts around the interesting values.
func near(rng *rand.Rand) Amount {
	centers := []Amount{0, 1000, resources.MaxAmount / 3, resources.MaxAmount / 2, resources.MaxAmount, resources.MaxAmount - 1, resources.Max / 3}
	c := centers[rng.IntN(len(centers))]
	if c > 10 && rng.IntN(2) == 0 {
		c -= Amount(rng.IntN(1000))
	}
	return c
}

func randomLimitsSpec(rng *rand.Rand) *limitsSpec {
	s := &limitsSpec{cohorts: map[string]string{"root": ""}, cqs: map[string]string{}, quotas: map[string]Quota{}, usage: map[string]*big.Int{}}
	parents := []string{"root"}
	for i := 0; i < rng.IntN(3); i++ {
		name := fmt.Sprintf("c%d", i)
		s.cohorts[name] = "root"
		parents = append(parents, name)
	}
	for name := range s.cohorts {
		s.quotas[name] = randomLimitsQuota(rng, name != "root")
	}
	for i := 0; i < 2+rng.IntN(4); i++ {
		name := fmt.Sprintf("q%d", i)
		s.cqs[name] = parents[rng.IntN(len(parents))]
		s.quotas[name] = randomLimitsQuota(rng, true)
		s.usage[name] = new(big.Int)
	}
	return s
}

func randomLimitsQuota(rng *rand.Rand, limits bool) Quota {
	q := NominalOnly(near(rng))
	if limits && rng.IntN(3) == 0 {
		q.BorrowingLimit = near(rng)
	}
	if limits && rng.IntN(3) == 0 {
		q.LendingLimit = near(rng)
	}
	return q
}

func (s *limitsSpec) build() *Tree {
	tree := New()
	for name, parent := range s.cohorts {
		tree.SetCohort(kueue.CohortReference(name), kueue.CohortReference(parent), Quotas{memory: s.quotas[name]})
	}
	for name, cohort := range s.cqs {
		tree.SetClusterQueue(kueue.ClusterQueueReference(name), kueue.CohortReference(cohort), Quotas{memory: s.quotas[name]})
	}
	return tree
}

// limitsRef computes Q, G, U and Available of every node in big integers.
type limitsRef struct {
	s       *limitsSpec
	q, g, u map[string]*big.Int // u as read: clamped at ±Max
	// capped and clamped say whether some Q was capped and some usage
	// clamped, for the coverage check.
	capped, clamped bool
}

var (
	bigMaxAmount = big.NewInt(resources.MaxAmount)
	bigZero      = new(big.Int)
)

// bigMin and bigMaxOf return a new value, never one of their arguments.
func bigMin(a, b *big.Int) *big.Int {
	if a.Cmp(b) < 0 {
		return new(big.Int).Set(a)
	}
	return new(big.Int).Set(b)
}

func bigMaxOf(a, b *big.Int) *big.Int {
	if a.Cmp(b) > 0 {
		return new(big.Int).Set(a)
	}
	return new(big.Int).Set(b)
}

func newLimitsRef(s *limitsSpec) *limitsRef {
	r := &limitsRef{s: s, q: map[string]*big.Int{}, g: map[string]*big.Int{}, u: map[string]*big.Int{}}
	r.compute("root")
	return r
}

func (r *limitsRef) children(name string) []string {
	var out []string
	for c, p := range r.s.cohorts {
		if p == name {
			out = append(out, c)
		}
	}
	for c, p := range r.s.cqs {
		if p == name {
			out = append(out, c)
		}
	}
	return out
}

func (r *limitsRef) compute(name string) {
	quota := r.s.quotas[name]
	q := big.NewInt(quota.Nominal)
	u := new(big.Int)
	if exact, ok := r.s.usage[name]; ok {
		u.Set(exact)
	}
	for _, c := range r.children(name) {
		r.compute(c)
		q.Add(q, new(big.Int).Sub(r.q[c], r.g[c]))
		u.Add(u, bigMaxOf(new(big.Int).Sub(r.u[c], r.g[c]), bigZero))
	}
	r.capped = r.capped || q.Cmp(bigMaxAmount) > 0
	r.clamped = r.clamped || u.CmpAbs(big.NewInt(resources.Max)) > 0
	r.q[name] = bigMin(q, bigMaxAmount)
	r.g[name] = new(big.Int)
	if quota.LendingLimit != resources.Unlimited {
		r.g[name] = bigMaxOf(new(big.Int).Sub(r.q[name], big.NewInt(quota.LendingLimit)), bigZero)
	}
	r.u[name] = big.NewInt(clampBig(u))
}

func (r *limitsRef) parent(name string) string {
	if p, ok := r.s.cqs[name]; ok {
		return p
	}
	return r.s.cohorts[name]
}

// available is the recursive definition, exact, uncapped.
func (r *limitsRef) available(name string) *big.Int {
	q, g, u := r.q[name], r.g[name], r.u[name]
	parent := r.parent(name)
	if parent == "" {
		return new(big.Int).Sub(q, u)
	}
	local := bigMaxOf(new(big.Int).Sub(g, u), bigZero)
	fromParent := r.available(parent)
	if bl := r.s.quotas[name].BorrowingLimit; bl != resources.Unlimited {
		lent := new(big.Int).Sub(q, g)
		usedAbove := bigMaxOf(new(big.Int).Sub(u, g), bigZero)
		fromParent = bigMin(fromParent, new(big.Int).Add(new(big.Int).Sub(lent, usedAbove), big.NewInt(bl)))
	}
	return local.Add(local, bigMaxOf(fromParent, bigZero))
}

func (r *limitsRef) check(t *testing.T, tree *Tree, what string) {
	t.Helper()
	nodes := map[string]*Node{}
	for name := range r.s.cohorts {
		nodes[name] = tree.Cohort(kueue.CohortReference(name))
	}
	for name := range r.s.cqs {
		nodes[name] = tree.ClusterQueue(kueue.ClusterQueueReference(name))
	}
	for name, n := range nodes {
		q, u, a := n.SubtreeQuota(memory), n.Usage(memory), n.Available(memory)
		if q == resources.Unlimited || a == resources.Unlimited {
			t.Fatalf("%s: %s is Unlimited (Q %d, Available %d)", what, name, q, a)
		}
		if r.q[name].Cmp(big.NewInt(q)) != 0 || r.u[name].Cmp(big.NewInt(u)) != 0 {
			t.Fatalf("%s: %s has Q %d U %d, reference %s %s", what, name, q, u, r.q[name], r.u[name])
		}
		if want := bigMin(r.available(name), bigMaxAmount); want.Cmp(big.NewInt(a)) != 0 {
			t.Fatalf("%s: %s has Available %d, reference %s", what, name, a, want)
		}
	}
}

// TestTreeNearTheLimits: random trees whose quotas and usage are near
// MaxAmount and beyond; after every change the tree matches the big
// reference, a tree built from scratch agrees, and once everything is
// released every usage is 0 again.
func TestTreeNearTheLimits(t *testing.T) {
	var capped, clamped int
	defer func() {
		if !t.Failed() && (capped < 300 || clamped < 300) {
			t.Errorf("the generator no longer reaches the limits: %d states with a capped quota, %d with clamped usage", capped, clamped)
		}
	}()
	for seed := uint64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 53))
			s := randomLimitsSpec(rng)
			tree := s.build()
			type added struct {
				cq     string
				amount Amount
			}
			var log []added
			for op := 0; op < 40; op++ {
				switch {
				case len(log) > 0 && rng.IntN(3) == 0:
					i := rng.IntN(len(log))
					a := log[i]
					log = append(log[:i], log[i+1:]...)
					tree.RemoveUsage(tree.ClusterQueue(kueue.ClusterQueueReference(a.cq)), resources.FlavorResourceQuantities{memory: a.amount})
					s.usage[a.cq].Sub(s.usage[a.cq], big.NewInt(a.amount))
				case rng.IntN(10) == 0:
					name := fmt.Sprintf("q%d", rng.IntN(len(s.cqs)))
					s.quotas[name] = randomLimitsQuota(rng, true)
					tree.SetClusterQueue(kueue.ClusterQueueReference(name), kueue.CohortReference(s.cqs[name]), Quotas{memory: s.quotas[name]})
				default:
					a := added{fmt.Sprintf("q%d", rng.IntN(len(s.cqs))), max(1, near(rng))}
					log = append(log, a)
					tree.AddUsage(tree.ClusterQueue(kueue.ClusterQueueReference(a.cq)), resources.FlavorResourceQuantities{memory: a.amount})
					s.usage[a.cq].Add(s.usage[a.cq], big.NewInt(a.amount))
				}
				what := fmt.Sprintf("after op %d", op)
				ref := newLimitsRef(s)
				ref.check(t, tree, what)
				if ref.capped {
					capped++
				}
				if ref.clamped {
					clamped++
				}
				fresh := s.build()
				for name, u := range s.usage {
					addBig(fresh, name, u)
				}
				newLimitsRef(s).check(t, fresh, what+" (from scratch)")
			}
			for _, a := range log {
				tree.RemoveUsage(tree.ClusterQueue(kueue.ClusterQueueReference(a.cq)), resources.FlavorResourceQuantities{memory: a.amount})
			}
			for name := range s.usage {
				s.usage[name].SetInt64(0)
			}
			newLimitsRef(s).check(t, tree, "after releasing everything")
			for _, n := range tree.nodes {
				if n != nil && (len(n.usage) != 0 || len(n.excess) != 0) {
					t.Fatalf("%s keeps usage %v (excess %v) after releasing everything", n.name, n.usage, n.excess)
				}
			}
		})
	}
}

// addBig adds an exact usage to a ClusterQueue in amounts an int64 holds.
func addBig(tree *Tree, cq string, u *big.Int) {
	rest := new(big.Int).Set(u)
	step := big.NewInt(resources.MaxAmount)
	for rest.Sign() > 0 {
		chunk := bigMin(rest, step)
		tree.AddUsage(tree.ClusterQueue(kueue.ClusterQueueReference(cq)), resources.FlavorResourceQuantities{memory: chunk.Int64()})
		rest.Sub(rest, chunk)
	}
}
