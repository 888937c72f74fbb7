package queueing

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Candidates keeps each queue's offer until something changes it. Random
// traces of every operation compare it, after each one, with a walk over
// every entry (the definition): the same workloads, in the same order,
// with the same versions.
func TestCandidatesMatchAFullWalk(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { offerTrace(t, seed) })
	}
}

func offerTrace(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := NewManager()
	cqs := []kueue.ClusterQueueReference{"a", "b", "c"}
	lqs := []LocalQueueKey{{Namespace: "ns", Name: "l0"}, {Namespace: "ns", Name: "l1"}, {Namespace: "ns", Name: "l2"}, {Namespace: "ns", Name: "l3"}}
	strategies := []kueue.QueueingStrategy{kueue.BestEffortFIFO, kueue.StrictFIFO}
	for _, cq := range cqs {
		m.SetClusterQueue(cq, strategies[rng.IntN(2)])
	}
	for i, lq := range lqs {
		m.SetLocalQueue(lq, cqs[i%len(cqs)])
	}
	shapes := []*workload.Shape{shapeOf(1), shapeOf(2), shapeOf(3)}
	now := int64(1000)
	rv := 0
	var log []string
	newInfo := func(name string) *workload.Info {
		rv++
		w := &workload.Info{Key: types.NamespacedName{Namespace: "ns", Name: name}, UID: types.UID(name),
			ResourceVersion: fmt.Sprint(rv), LocalQueue: lqs[rng.IntN(len(lqs))].Name, Priority: int32(rng.IntN(3)),
			QueueOrderTime: int64(rng.IntN(50)), Shape: m.InternShape(shapes[rng.IntN(len(shapes))])}
		if rng.IntN(5) == 0 {
			w.RequeueAt = now + int64(rng.IntN(20))
		}
		return w
	}
	name := func() string { return fmt.Sprintf("w%d", rng.IntN(30)) }
	for step := range 300 {
		var desc string
		switch p := rng.IntN(100); {
		case p < 30:
			w := newInfo(name())
			m.AddOrUpdate(w)
			desc = "add " + w.Key.Name
		case p < 38:
			k := types.NamespacedName{Namespace: "ns", Name: name()}
			if cur, ok := m.Get(k); ok {
				same := *cur
				rv++
				same.ResourceVersion = fmt.Sprint(rv)
				m.AddOrUpdate(&same)
			}
			desc = "new version of " + k.Name
		case p < 42:
			k := types.NamespacedName{Namespace: "ns", Name: name()}
			if cur, ok := m.Get(k); ok {
				pre := *cur
				pre.Preempting = true
				m.Replace(&pre)
			}
			desc = "preempting " + k.Name
		case p < 52:
			k := types.NamespacedName{Namespace: "ns", Name: name()}
			m.Delete(k)
			desc = "delete " + k.Name
		case p < 64:
			cq := cqs[rng.IntN(len(cqs))]
			m.ParkShape(cq, m.InternShape(shapes[rng.IntN(len(shapes))]))
			desc = "park a shape in " + string(cq)
		case p < 72:
			k := types.NamespacedName{Namespace: "ns", Name: name()}
			m.ParkWorkload(k)
			desc = "park " + k.Name
		case p < 78:
			cq := cqs[rng.IntN(len(cqs))]
			m.Unpark(cq)
			desc = "unpark " + string(cq)
		case p < 80:
			m.UnparkAll()
			desc = "unpark all"
		case p < 85:
			k := types.NamespacedName{Namespace: "ns", Name: name()}
			m.HoldBack(k, now+int64(rng.IntN(20)))
			desc = "hold back " + k.Name
		case p < 87:
			cq := cqs[rng.IntN(len(cqs))]
			m.SetClusterQueue(cq, strategies[rng.IntN(2)])
			desc = "set " + string(cq)
		case p < 89:
			lq := lqs[rng.IntN(len(lqs))]
			m.SetLocalQueue(lq, cqs[rng.IntN(len(cqs))])
			desc = "retarget " + string(lq.Name)
		case p < 90:
			cq := cqs[rng.IntN(len(cqs))]
			m.DeleteClusterQueue(cq)
			desc = "delete " + string(cq)
		default:
			now += int64(rng.IntN(8))
			desc = fmt.Sprint("time ", now)
		}
		log = append(log, desc)
		want := fullWalk(m, now)
		got := describeQueues(m.Candidates(now))
		if got != want {
			t.Fatalf("step %d: Candidates = \n%s\nwant\n%s\nafter %s", step, got, want, strings.Join(log, "; "))
		}
	}
}

// fullWalk is what Candidates must return at now, from every entry, without
// changing anything.
func fullWalk(m *Manager, now int64) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []workload.Queue
	names := make([]kueue.ClusterQueueReference, 0, len(m.queues))
	for name := range m.queues {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		q := m.queues[name]
		var live []*entry
		for _, e := range q.items {
			if e.queue == q && e.listedIn == q {
				live = append(live, e)
			}
		}
		slices.SortFunc(live, func(a, b *entry) int { return workload.Compare(a.info, b.info) })
		var ws []*workload.Info
		for _, e := range live {
			if e.parked || e.info.RequeueAt > now || m.heldUntil[e.info.Key] > now {
				continue
			}
			if _, parked := q.parkedShapes[e.info.Shape]; parked && !e.fresh {
				continue
			}
			ws = append(ws, e.info)
		}
		if len(ws) > 0 {
			out = append(out, workload.Queue{ClusterQueue: name, Workloads: ws})
		}
	}
	return describeQueues(out)
}

func describeQueues(qs []workload.Queue) string {
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "%s:", q.ClusterQueue)
		for _, w := range q.Workloads {
			fmt.Fprintf(&b, " %s@%s", w.Key.Name, w.ResourceVersion)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestNamespaceListKeepsFirstOccurrences(t *testing.T) {
	var l namespaceList
	var want []string
	for i := range 60 {
		ns := fmt.Sprintf("ns%d", (i*7)%20)
		if !slices.Contains(want, ns) {
			want = append(want, ns)
		}
		l.add(ns)
	}
	if !slices.Equal(l.list, want) {
		t.Fatalf("namespaces %v, want %v", l.list, want)
	}
}

// A preemptor requeued unchanged (still waiting for its victims) leaves
// its queue's offer as it was, in either strategy, so that its cohort tree
// can stay idle (cache.Cache.SkipIdle); a changed hint changes it.
func TestUnchangedPreemptorKeepsTheOffer(t *testing.T) {
	for _, strategy := range []kueue.QueueingStrategy{kueue.BestEffortFIFO, kueue.StrictFIFO} {
		t.Run(string(strategy), func(t *testing.T) {
			m := NewManager()
			m.SetClusterQueue("cq", strategy)
			m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "lq"}, "cq")
			m.AddOrUpdate(info("a", 5, 1, 2))
			m.AddOrUpdate(info("b", 0, 2, 1))
			pre, _ := m.Get(types.NamespacedName{Namespace: "ns", Name: "a"})
			marked := *pre
			marked.Preempting = true
			marked.Hint = &workload.Hint{Counts: []int32{1}}
			m.Replace(&marked)
			first := m.Candidates(10)[0].Workloads
			again := marked
			m.Replace(&again)
			if got := m.Candidates(11)[0].Workloads; &got[0] != &first[0] {
				t.Fatal("an unchanged preemptor rebuilt its queue's offer")
			}
			other := marked
			other.Hint = &workload.Hint{Counts: []int32{2}}
			m.Replace(&other)
			second := m.Candidates(12)[0].Workloads
			if &second[0] == &first[0] {
				t.Fatal("a new hint did not reach the offer")
			}
			// Other victims on the same assignment are a new hint too: the
			// next cycle must see them (preemption.Finder.kept).
			victims := other
			victims.Hint = &workload.Hint{Counts: []int32{2}, Victims: []workload.Victim{{Key: types.NamespacedName{Namespace: "ns", Name: "b"}}}}
			m.Replace(&victims)
			if got := m.Candidates(13)[0].Workloads; &got[0] == &second[0] || got[0].Hint == nil || len(got[0].Hint.Victims) != 1 {
				t.Fatal("a hint with new victims did not reach the offer")
			}
		})
	}
}
