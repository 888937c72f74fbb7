package hierarchy

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Property tests of the cohort tree. Each trace builds a random tree and
// applies random operations: add usage to a ClusterQueue (only up to its
// Available, as the scheduler does), remove usage added before, change
// quotas, move a ClusterQueue, re-parent a Cohort (which may create or break
// a cycle), create a cycle and break it again, delete a Cohort object. After
// every operation check (property_check_test.go) verifies, against a fresh
// tree and against the reference model of property_ref_test.go:
//
//	(a) incremental == from scratch: a new tree built from the same specs and
//	    per-ClusterQueue usage has the same nodes, parents, Active, Usage,
//	    SubtreeQuota, Available and PotentialAvailable; so do the reference
//	    model's Q and U. SubtreeQuota is not compared under a cycle, where it
//	    keeps whatever it was before (it is meaningless there).
//	(b) limits: while no quota/structure change happened, no node exceeds
//	    its limits (root U <= Q; with a borrowing limit, max(0, U-G) <=
//	    Q-G+BL); after a change that broke a limit, adding or removing usage
//	    never makes any node's excess grow. Lending limits: every active
//	    ClusterQueue with a parent has Available >= max(0, G-U), and the
//	    totals check of refTree.lendingCheck holds.
//	(c) Available <= PotentialAvailable; Available equals the reference's
//	    recursive definition and, for ClusterQueues, the brute-force maximum;
//	    PotentialAvailable equals the brute-force maximum with no usage.
//	(d) a node under a cycle is inactive with Available and
//	    PotentialAvailable 0; breaking the cycle restores every value.
//
// BorrowingLevel is compared with the reference before every addition.
// Operations run on a ClusterQueue under a cycle too (removals; additions
// find Available 0 and are skipped).
// On failure the seed, the tree and the operations so far are printed; run
// one trace again with -run 'TestTreeProperties/seed=N'.

const (
	propTraces = 250
	propOps    = 50
)

var propResources = []corev1.ResourceName{"cpu", "memory"}

// propSpec is the test's own record of what was set on the tree.
type propSpec struct {
	frs     []FlavorResource
	cohorts map[string]*propCohort // Cohort objects (explicit)
	cqs     map[string]*propCQ
}

type propCohort struct {
	parent string
	quotas Quotas
}

type propCQ struct {
	cohort string
	quotas Quotas
	usage  resources.FlavorResourceQuantities
	chunks []propChunk
}

type propChunk struct {
	fr     FlavorResource
	amount Amount
}

// propTrace is one random trace.
type propTrace struct {
	t    *testing.T
	seed uint64
	rng  *rand.Rand
	spec *propSpec
	tree *Tree
	log  []string
	// structural is true once an operation other than adding or removing
	// usage happened (limits may then be exceeded legitimately).
	structural bool
	// excess is each node's excess after the last check, by node key.
	excess map[string]Amount
	stats  *propStats
	// sharing draws when to freeze or clone the tree (share.go), apart
	// from rng so that the operations stay those of the seed; views are
	// frozen views and trees left behind by a clone, with what they showed
	// then: nothing done afterwards may change them.
	sharing *rand.Rand
	views   []propView
}

type propView struct {
	tree *Tree
	dump string
	desc string
}

func TestTreeProperties(t *testing.T) {
	stats := &propStats{}
	for seed := uint64(1); seed <= propTraces; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			tr := newPropTrace(t, seed)
			tr.stats = stats
			tr.check("initial tree", opStructure)
			for i := 0; i < propOps; i++ {
				tr.share()
				tr.step()
				tr.checkViews()
			}
		})
	}
	t.Logf("coverage: %+v", *stats)
	if !t.Failed() && (stats.adds < 3000 || stats.borrowingAdds < 500 || stats.dirtyUsageOps < 300 ||
		stats.lendingChecks < 3000 || stats.brokenNodes < 300 || stats.cycles < 300) {
		t.Errorf("the generator no longer exercises every property: %+v", *stats)
	}
}

// propStats counts what the traces exercised.
type propStats struct {
	// adds counts additions, borrowingAdds those at borrowing level > 0;
	// dirtyUsageOps usage changes made while some limit was exceeded.
	adds, borrowingAdds, dirtyUsageOps int
	// lendingChecks counts evaluations of refTree.lendingCheck's inequality.
	lendingChecks int
	// brokenNodes counts nodes seen under a cycle; cycles, opCycleAndBreak runs.
	brokenNodes, cycles int
}

func newPropTrace(t *testing.T, seed uint64) *propTrace {
	rng := rand.New(rand.NewPCG(seed, 0x6b756f7461))
	tr := &propTrace{t: t, seed: seed, rng: rng, tree: New(), sharing: rand.New(rand.NewPCG(seed, 0x73686172))}
	tr.spec = &propSpec{cohorts: map[string]*propCohort{}, cqs: map[string]*propCQ{}}
	nf, nr := 1+rng.IntN(3), 1+rng.IntN(2)
	for f := 0; f < nf; f++ {
		for r := 0; r < nr; r++ {
			tr.spec.frs = append(tr.spec.frs, FlavorResource{Flavor: kueue.ResourceFlavorReference(fmt.Sprintf("f%d", f)), Resource: propResources[r]})
		}
	}
	// 1-3 levels of Cohorts; a few level-0 Cohorts stay implicit (only
	// referenced). Objects are created in random order.
	type cohortInit struct{ name, parent string }
	var inits []cohortInit
	var names, prev []string
	for level := 0; level < 1+rng.IntN(3); level++ {
		var cur []string
		for i := 0; i < 1+rng.IntN(3); i++ {
			name := fmt.Sprintf("c%d%d", level, i)
			cur = append(cur, name)
			names = append(names, name)
			parent := ""
			if level > 0 {
				parent = prev[rng.IntN(len(prev))]
			} else if rng.IntN(5) == 0 {
				continue // implicit root
			}
			inits = append(inits, cohortInit{name, parent})
		}
		prev = cur
	}
	for _, i := range rng.Perm(len(inits)) {
		tr.setCohort(inits[i].name, inits[i].parent, tr.randomQuotas(false))
	}
	for i, n := 0, 2+rng.IntN(5); i < n; i++ {
		cohort := ""
		if rng.IntN(7) != 0 {
			cohort = names[rng.IntN(len(names))]
		}
		tr.setCQ(fmt.Sprintf("q%d", i), cohort, tr.randomQuotas(true))
	}
	tr.log = append(tr.log, "build")
	return tr
}

// randomQuotas draws quotas: ClusterQueues usually cover each pair,
// Cohorts often have none or a nominal quota of 0; limits are set at random.
func (tr *propTrace) randomQuotas(cq bool) Quotas {
	rng := tr.rng
	out := Quotas{}
	for _, fr := range tr.spec.frs {
		if cq && rng.IntN(5) == 0 || !cq && rng.IntN(3) == 0 {
			continue
		}
		q := NominalOnly(Amount(rng.IntN(11)) * 1000)
		if !cq && rng.IntN(2) == 0 {
			q.Nominal = 0
		}
		if rng.IntN(3) == 0 {
			q.BorrowingLimit = Amount(rng.IntN(7)) * 1000
		}
		if rng.IntN(3) == 0 {
			q.LendingLimit = Amount(rng.IntN(int(q.Nominal/1000)+5)) * 1000
		}
		out[fr] = q
	}
	return out
}

func (tr *propTrace) setCohort(name, parent string, quotas Quotas) {
	tr.spec.cohorts[name] = &propCohort{parent: parent, quotas: quotas}
	tr.tree.SetCohort(kueue.CohortReference(name), kueue.CohortReference(parent), quotas)
}

func (tr *propTrace) setCQ(name, cohort string, quotas Quotas) {
	spec := tr.spec.cqs[name]
	if spec == nil {
		spec = &propCQ{usage: resources.FlavorResourceQuantities{}}
		tr.spec.cqs[name] = spec
	}
	spec.cohort, spec.quotas = cohort, quotas
	tr.tree.SetClusterQueue(kueue.ClusterQueueReference(name), kueue.CohortReference(cohort), quotas)
}

type opKind uint8

const (
	opUsage opKind = iota
	opStructure
)

// share freezes the tree, or replaces it with a clone, now and then.
func (tr *propTrace) share() {
	switch p := tr.sharing.IntN(100); {
	case p < 25:
		view := tr.tree.Freeze()
		tr.views = append(tr.views, propView{tree: view, dump: dumpTree(view), desc: "frozen"})
		tr.log = append(tr.log, "freeze")
	case p < 40:
		old := tr.tree
		tr.tree = old.Clone()
		tr.views = append(tr.views, propView{tree: old, dump: dumpTree(old), desc: "cloned"})
		tr.log = append(tr.log, "clone")
	}
	if len(tr.views) > 6 {
		tr.views = tr.views[1:]
	}
}

// checkViews verifies that no view changed since it was taken.
func (tr *propTrace) checkViews() {
	tr.t.Helper()
	for _, v := range tr.views {
		if got := dumpTree(v.tree); got != v.dump {
			tr.fail("a %s tree changed:\nthen:\n%s\nnow:\n%s", v.desc, v.dump, got)
		}
	}
}

// dumpTree renders every node's parent, Active, Usage, SubtreeQuota and
// Available.
func dumpTree(t *Tree) string {
	var b strings.Builder
	render := func(n *Node) {
		parent := ""
		if n.Parent() != nil {
			parent = n.Parent().Name()
		}
		fmt.Fprintf(&b, "%s parent=%s active=%v", n.Name(), parent, n.Active())
		for _, fr := range n.FlavorResources() {
			fmt.Fprintf(&b, " %s:u=%d,q=%d,a=%d", fr, n.Usage(fr), n.SubtreeQuota(fr), n.Available(fr))
		}
		b.WriteString("\n")
	}
	for _, name := range t.CohortNames() {
		render(t.cohort(name))
	}
	for _, name := range t.ClusterQueueNames() {
		render(t.queue(name))
	}
	return b.String()
}

// step applies one random operation and checks the tree.
func (tr *propTrace) step() {
	rng := tr.rng
	switch p := rng.IntN(100); {
	case p < 45:
		tr.opAdd()
	case p < 65:
		tr.opRemove()
	case p < 75:
		tr.opQuota()
	case p < 83:
		tr.opMoveCQ()
	case p < 90:
		tr.opReparent()
	case p < 96:
		tr.opCycleAndBreak()
	default:
		tr.opDeleteCohort()
	}
}

func (tr *propTrace) opAdd() {
	rng := tr.rng
	names := slices.Sorted(maps.Keys(tr.spec.cqs))
	name := names[rng.IntN(len(names))]
	spec := tr.spec.cqs[name]
	var fr FlavorResource
	if covered := slices.SortedFunc(maps.Keys(spec.quotas), resources.CompareFlavorResource); len(covered) > 0 && rng.IntN(10) != 0 {
		fr = covered[rng.IntN(len(covered))]
	} else {
		fr = tr.spec.frs[rng.IntN(len(tr.spec.frs))]
	}
	node := tr.tree.ClusterQueue(kueue.ClusterQueueReference(name))
	avail := node.Available(fr)
	if avail < 1 {
		return
	}
	amount := avail
	if rng.IntN(4) != 0 {
		amount = 1 + rng.Int64N(avail)
	}
	ref := buildRef(tr.spec)
	wantLevel, wantOK := ref.borrowingLevel(ref.cqs[name], fr, amount)
	level, ok := node.BorrowingLevel(fr, amount)
	if !ok || level != wantLevel || ok != wantOK {
		tr.fail("BorrowingLevel(%s, %s, %d) = %d %v, reference %d %v (amount <= Available %d, so it must fit)",
			name, fr, amount, level, ok, wantLevel, wantOK, avail)
	}
	tr.stats.adds++
	if level > 0 {
		tr.stats.borrowingAdds++
	}
	tr.tree.AddUsage(node, resources.FlavorResourceQuantities{fr: amount})
	spec.usage[fr] += amount
	spec.chunks = append(spec.chunks, propChunk{fr, amount})
	tr.check(fmt.Sprintf("add %s %s %d (available %d, level %d)", name, fr, amount, avail, level), opUsage)
}

func (tr *propTrace) opRemove() {
	rng := tr.rng
	var holders []string
	for _, name := range slices.Sorted(maps.Keys(tr.spec.cqs)) {
		if len(tr.spec.cqs[name].chunks) > 0 {
			holders = append(holders, name)
		}
	}
	if len(holders) == 0 {
		return
	}
	name := holders[rng.IntN(len(holders))]
	spec := tr.spec.cqs[name]
	i := rng.IntN(len(spec.chunks))
	c := spec.chunks[i]
	spec.chunks = slices.Delete(spec.chunks, i, i+1)
	tr.tree.RemoveUsage(tr.tree.ClusterQueue(kueue.ClusterQueueReference(name)), resources.FlavorResourceQuantities{c.fr: c.amount})
	spec.usage.Sub(resources.FlavorResourceQuantities{c.fr: c.amount})
	tr.check(fmt.Sprintf("remove %s %s %d", name, c.fr, c.amount), opUsage)
}

func (tr *propTrace) opQuota() {
	rng := tr.rng
	if cohorts := slices.Sorted(maps.Keys(tr.spec.cohorts)); len(cohorts) > 0 && rng.IntN(3) == 0 {
		name := cohorts[rng.IntN(len(cohorts))]
		quotas := tr.randomQuotas(false)
		tr.setCohort(name, tr.spec.cohorts[name].parent, quotas)
		tr.check(fmt.Sprintf("set quotas of cohort %s: %s", name, describeQuotas(quotas)), opStructure)
		return
	}
	names := slices.Sorted(maps.Keys(tr.spec.cqs))
	name := names[rng.IntN(len(names))]
	quotas := tr.randomQuotas(true)
	tr.setCQ(name, tr.spec.cqs[name].cohort, quotas)
	tr.check(fmt.Sprintf("set quotas of cq %s: %s", name, describeQuotas(quotas)), opStructure)
}

// cohortChoice picks a Cohort name for a parent: an existing one (explicit
// or implicit), none, or a new implicit one.
func (tr *propTrace) cohortChoice() string {
	switch names := tr.tree.CohortNames(); {
	case tr.rng.IntN(6) == 0:
		return ""
	case tr.rng.IntN(8) == 0 || len(names) == 0:
		return fmt.Sprintf("new%d", tr.rng.IntN(3))
	default:
		return string(names[tr.rng.IntN(len(names))])
	}
}

func (tr *propTrace) opMoveCQ() {
	names := slices.Sorted(maps.Keys(tr.spec.cqs))
	name := names[tr.rng.IntN(len(names))]
	to := tr.cohortChoice()
	tr.setCQ(name, to, tr.spec.cqs[name].quotas)
	tr.check(fmt.Sprintf("move cq %s to %q", name, to), opStructure)
}

func (tr *propTrace) opReparent() {
	names := tr.tree.CohortNames()
	if len(names) == 0 {
		return
	}
	name := string(names[tr.rng.IntN(len(names))])
	to := tr.cohortChoice()
	quotas := Quotas{}
	if spec := tr.spec.cohorts[name]; spec != nil {
		quotas = spec.quotas
	}
	tr.setCohort(name, to, quotas)
	tr.check(fmt.Sprintf("set parent of cohort %s to %q", name, to), opStructure)
}

func (tr *propTrace) opDeleteCohort() {
	names := slices.Sorted(maps.Keys(tr.spec.cohorts))
	if len(names) == 0 {
		return
	}
	name := names[tr.rng.IntN(len(names))]
	delete(tr.spec.cohorts, name)
	tr.tree.DeleteCohort(kueue.CohortReference(name))
	tr.check("delete cohort "+name, opStructure)
}

// opCycleAndBreak makes a Cohort the child of one of its own descendants
// (or of itself), checks that its whole subtree is inactive, then restores
// its parent and checks that every value is back.
func (tr *propTrace) opCycleAndBreak() {
	names := slices.Sorted(maps.Keys(tr.spec.cohorts))
	if len(names) == 0 {
		return
	}
	name := names[tr.rng.IntN(len(names))]
	spec := *tr.spec.cohorts[name]
	ref := buildRef(tr.spec)
	if ref.cohorts[name].broken {
		return
	}
	var inside []*refNode
	var targets []string
	for _, n := range ref.all {
		if n.inSubtree(ref.cohorts[name]) {
			inside = append(inside, n)
			if !n.isCQ {
				targets = append(targets, n.name)
			}
		}
	}
	slices.Sort(targets)
	tr.stats.cycles++
	before := tr.values()
	target := targets[tr.rng.IntN(len(targets))]
	tr.setCohort(name, target, spec.quotas)
	tr.check(fmt.Sprintf("cycle: set parent of cohort %s to its descendant %s", name, target), opStructure)
	for _, n := range inside {
		node := tr.node(n)
		if node.Active() {
			tr.fail("%s is under the cycle through %s but Active", n.name, name)
		}
		for _, fr := range tr.spec.frs {
			if a, p := node.Available(fr), node.PotentialAvailable(fr); a != 0 || p != 0 {
				tr.fail("%s is under a cycle but Available(%s) = %d, PotentialAvailable = %d", n.name, fr, a, p)
			}
		}
	}
	tr.setCohort(name, spec.parent, spec.quotas)
	tr.check(fmt.Sprintf("break cycle: set parent of cohort %s back to %q", name, spec.parent), opStructure)
	if after := tr.values(); after != before {
		tr.fail("breaking the cycle did not restore the tree:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// values renders every node's Active, Usage, SubtreeQuota, Available and
// PotentialAvailable.
func (tr *propTrace) values() string {
	var b strings.Builder
	ref := buildRef(tr.spec)
	for _, n := range ref.all {
		node := tr.node(n)
		fmt.Fprintf(&b, "%s active=%v", n.name, node.Active())
		for _, fr := range tr.spec.frs {
			fmt.Fprintf(&b, " %s:u=%d,q=%d,a=%d,p=%d", fr, node.Usage(fr), node.SubtreeQuota(fr), node.Available(fr), node.PotentialAvailable(fr))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (tr *propTrace) node(n *refNode) *Node {
	if n.isCQ {
		return tr.tree.ClusterQueue(kueue.ClusterQueueReference(n.name))
	}
	return tr.tree.Cohort(kueue.CohortReference(n.name))
}

func nodeKey(n *refNode, fr FlavorResource) string {
	kind := "cohort"
	if n.isCQ {
		kind = "cq"
	}
	return kind + "/" + n.name + "/" + fr.String()
}

// freshTree builds a new tree from the specs and usage.
func (s *propSpec) freshTree() *Tree {
	t := New()
	for _, name := range slices.Sorted(maps.Keys(s.cohorts)) {
		c := s.cohorts[name]
		t.SetCohort(kueue.CohortReference(name), kueue.CohortReference(c.parent), c.quotas)
	}
	for _, name := range slices.Sorted(maps.Keys(s.cqs)) {
		q := s.cqs[name]
		t.SetClusterQueue(kueue.ClusterQueueReference(name), kueue.CohortReference(q.cohort), q.quotas)
	}
	for _, name := range slices.Sorted(maps.Keys(s.cqs)) {
		t.AddUsage(t.ClusterQueue(kueue.ClusterQueueReference(name)), s.cqs[name].usage)
	}
	return t
}

func (tr *propTrace) fail(format string, args ...any) {
	tr.t.Helper()
	tr.t.Fatalf("seed %d: %s\n--- tree ---\n%s--- operations ---\n%s", tr.seed, fmt.Sprintf(format, args...),
		tr.spec.describe(), strings.Join(tr.log, "\n"))
}

func (s *propSpec) describe() string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(s.cohorts)) {
		c := s.cohorts[name]
		fmt.Fprintf(&b, "cohort %s parent=%q %s\n", name, c.parent, describeQuotas(c.quotas))
	}
	for _, name := range slices.Sorted(maps.Keys(s.cqs)) {
		q := s.cqs[name]
		fmt.Fprintf(&b, "cq %s cohort=%q %s usage=%v\n", name, q.cohort, describeQuotas(q.quotas), describeUsage(q.usage))
	}
	return b.String()
}

func describeQuotas(qs Quotas) string {
	var parts []string
	for _, fr := range slices.SortedFunc(maps.Keys(qs), resources.CompareFlavorResource) {
		q := qs[fr]
		s := fmt.Sprintf("%s=%d", fr, q.Nominal)
		if q.BorrowingLimit != resources.Unlimited {
			s += fmt.Sprintf(",bl=%d", q.BorrowingLimit)
		}
		if q.LendingLimit != resources.Unlimited {
			s += fmt.Sprintf(",ll=%d", q.LendingLimit)
		}
		parts = append(parts, s)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func describeUsage(u resources.FlavorResourceQuantities) string {
	var parts []string
	for _, fr := range u.Keys() {
		parts = append(parts, fmt.Sprintf("%s=%d", fr, u[fr]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func describeLending(n, a *refNode, fr FlavorResource, used, nominal, lent, b Amount) string {
	return fmt.Sprintf("lending limit of %s on %s: ClusterQueues under %s outside %s use %d > their nominal %d + lent by %s %d + borrowable above %s %d",
		n.name, fr, a.name, n.name, used, nominal, n.name, lent, a.name, b)
}

// TestDeleteCohortNobodyNames: after DeleteCohort of a Cohort that no
// ClusterQueue or Cohort names, the tree must not list it (DeleteCohort's
// contract: it stays as an implicit Cohort only while something names it).
// Found by TestTreeProperties (seed 2).
func TestDeleteCohortNobodyNames(t *testing.T) {
	tree := New()
	tree.SetCohort("org", "", Quotas{})
	tree.SetClusterQueue("a", "org", Quotas{})
	tree.SetClusterQueue("a", "", Quotas{})
	tree.DeleteCohort("org")
	if got := tree.CohortNames(); len(got) != 0 {
		t.Fatalf("DeleteCohort kept the unreferenced Cohort %v as an empty implicit Cohort", got)
	}
}
