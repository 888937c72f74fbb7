package queueing

import (
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

func inLQ(name, lq string, prio int32, t int64) *workload.Info {
	w := info(name, prio, t, 1)
	w.LocalQueue = kueue.LocalQueueName(lq)
	return w
}

type pos struct {
	name     string
	cq, lq   int32
	priority int32
}

func positions(ps []Position) []pos {
	out := make([]pos, len(ps))
	for i, p := range ps {
		out[i] = pos{p.Info.Key.Name, p.InClusterQueue, p.InLocalQueue, p.Info.Priority}
	}
	return out
}

func twoLocalQueues(t *testing.T, strategy kueue.QueueingStrategy) *Manager {
	t.Helper()
	m := NewManager()
	m.SetClusterQueue("cq", strategy)
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "a"}, "cq")
	m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: "b"}, "cq")
	m.AddOrUpdate(inLQ("a-old", "a", 0, 10))
	m.AddOrUpdate(inLQ("b-old", "b", 0, 20))
	m.AddOrUpdate(inLQ("a-new", "a", 0, 30))
	m.AddOrUpdate(inLQ("b-high", "b", 5, 40))
	m.AddOrUpdate(inLQ("a-high", "a", 5, 50))
	return m
}

func TestPendingPageFollowsSchedulingOrderWithLocalQueuePositions(t *testing.T) {
	for _, strategy := range []kueue.QueueingStrategy{kueue.StrictFIFO, kueue.BestEffortFIFO} {
		t.Run(string(strategy), func(t *testing.T) {
			m := twoLocalQueues(t, strategy)
			got, ok := m.PendingPage("cq", 0, 100)
			want := []pos{{"b-high", 0, 0, 5}, {"a-high", 1, 0, 5}, {"a-old", 2, 1, 0}, {"b-old", 3, 1, 0}, {"a-new", 4, 2, 0}}
			if !ok || fmt.Sprint(positions(got)) != fmt.Sprint(want) {
				t.Fatalf("PendingPage = %v (found %v), want %v", positions(got), ok, want)
			}
			// The scheduler sees the same order.
			var cands []string
			for _, w := range m.Candidates(100)[0].Workloads {
				cands = append(cands, w.Key.Name)
			}
			for i, p := range want {
				if cands[i] != p.name {
					t.Fatalf("Candidates order %v differs from PendingPage %v", cands, want)
				}
			}
		})
	}
}

func TestPendingPageOffsetKeepsLocalQueuePositions(t *testing.T) {
	m := twoLocalQueues(t, kueue.BestEffortFIFO)
	got, _ := m.PendingPage("cq", 3, 1)
	want := []pos{{"b-old", 3, 1, 0}}
	if fmt.Sprint(positions(got)) != fmt.Sprint(want) {
		t.Fatalf("PendingPage(offset 3, limit 1) = %v, want %v", positions(got), want)
	}
	if got, _ := m.PendingPage("cq", 5, 10); len(got) != 0 {
		t.Fatalf("a page past the end = %v, want none", positions(got))
	}
	if _, ok := m.PendingPage("nope", 0, 10); ok {
		t.Fatal("an unknown ClusterQueue was reported found")
	}
}

func TestPendingPageListsParkedWorkloads(t *testing.T) {
	m := twoLocalQueues(t, kueue.BestEffortFIFO)
	m.Candidates(100)
	m.ParkWorkload(inLQ("a-high", "a", 5, 50).Key)
	m.ParkShape("cq", m.InternShape(shapeOf(1)))
	got, _ := m.PendingPage("cq", 0, 100)
	if len(got) != 5 || got[1].Info.Key.Name != "a-high" {
		t.Fatalf("PendingPage with parked workloads = %v, want all 5 in order", positions(got))
	}
}

func TestPendingPageInLocalQueue(t *testing.T) {
	m := twoLocalQueues(t, kueue.StrictFIFO)
	got, ok := m.PendingPageInLocalQueue(LocalQueueKey{Namespace: "ns", Name: "a"}, 0, 100)
	want := []pos{{"a-high", 1, 0, 5}, {"a-old", 2, 1, 0}, {"a-new", 4, 2, 0}}
	if !ok || fmt.Sprint(positions(got)) != fmt.Sprint(want) {
		t.Fatalf("PendingPageInLocalQueue = %v (found %v), want %v", positions(got), ok, want)
	}
	got, _ = m.PendingPageInLocalQueue(LocalQueueKey{Namespace: "ns", Name: "a"}, 1, 1)
	want = []pos{{"a-old", 2, 1, 0}}
	if fmt.Sprint(positions(got)) != fmt.Sprint(want) {
		t.Fatalf("PendingPageInLocalQueue(offset 1, limit 1) = %v, want %v", positions(got), want)
	}
	if _, ok := m.PendingPageInLocalQueue(LocalQueueKey{Namespace: "other", Name: "a"}, 0, 1); ok {
		t.Fatal("an unknown LocalQueue was reported found")
	}
	m.Delete(inLQ("a-high", "a", 5, 50).Key)
	got, _ = m.PendingPageInLocalQueue(LocalQueueKey{Namespace: "ns", Name: "a"}, 0, 100)
	want = []pos{{"a-old", 1, 0, 0}, {"a-new", 3, 1, 0}}
	if fmt.Sprint(positions(got)) != fmt.Sprint(want) {
		t.Fatalf("after a deletion, PendingPageInLocalQueue = %v, want %v", positions(got), want)
	}
}

// BenchmarkPendingPage reads (reporting ns/op and the p99 of a read) a
// page of 100 at offset 40,000 of a
// ClusterQueue holding 50,000 pending workloads in 100 LocalQueues, and
// a page of 100 of one LocalQueue (its workloads 300 to 399).
func BenchmarkPendingPage(b *testing.B) {
	m := NewManager()
	m.SetClusterQueue("cq", kueue.BestEffortFIFO)
	for i := range 100 {
		m.SetLocalQueue(LocalQueueKey{Namespace: "ns", Name: kueue.LocalQueueName(fmt.Sprintf("lq-%d", i))}, "cq")
	}
	for i := range 50000 {
		m.AddOrUpdate(inLQ(fmt.Sprintf("wl-%d", i), fmt.Sprintf("lq-%d", i%100), int32(i%7), int64(i)))
	}
	m.PendingPage("cq", 0, 1) // the first read sorts
	b.Run("ClusterQueue", func(b *testing.B) {
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			got, _ := m.PendingPage("cq", 40000, 100)
			took = append(took, time.Since(start))
			if len(got) != 100 {
				b.Fatalf("page of %d", len(got))
			}
		}
		reportP99(b, took)
	})
	// Each read follows a change of the queue: one more workload.
	b.Run("ClusterQueueAfterChange", func(b *testing.B) {
		var took []time.Duration
		i := 0
		for b.Loop() {
			i++
			m.AddOrUpdate(inLQ(fmt.Sprintf("new-%d", i), "lq-3", 3, int64(i)))
			start := time.Now()
			got, _ := m.PendingPage("cq", 40000, 100)
			took = append(took, time.Since(start))
			if len(got) != 100 {
				b.Fatalf("page of %d", len(got))
			}
		}
		reportP99(b, took)
	})
	b.Run("LocalQueue", func(b *testing.B) {
		key := LocalQueueKey{Namespace: "ns", Name: "lq-7"}
		var took []time.Duration
		for b.Loop() {
			start := time.Now()
			got, _ := m.PendingPageInLocalQueue(key, 300, 100)
			took = append(took, time.Since(start))
			if len(got) != 100 {
				b.Fatalf("page of %d", len(got))
			}
		}
		reportP99(b, took)
	})
}

// The queue keeps compact entries (DESIGN: memory).
func TestEntryStays32Bytes(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 32 {
		t.Fatalf("an entry takes %d bytes, want 32", n)
	}
}

// reportP99 reports the 99th percentile of the reads' durations (the
// AfterChange case times the read only, not the change before it).
func reportP99(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}
