package afs

import (
	"math"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/workload"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPenaltyRateIsOneSampleOfDecay(t *testing.T) {
	p := &Params{HalfLife: time.Minute, Interval: time.Minute}
	if got := p.PenaltyRate(); !near(got, 0.5) {
		t.Errorf("half-life equal to the interval: rate %v, want 0.5", got)
	}
	p = &Params{HalfLife: 0, Interval: time.Minute}
	if got := p.PenaltyRate(); got != 1 {
		t.Errorf("zero half-life: rate %v, want 1", got)
	}
}

func TestSampleDecaysTowardsWhatIsHeld(t *testing.T) {
	p := &Params{HalfLife: 10 * time.Second, Interval: 10 * time.Second}
	l := &Ledger{}
	start := int64(1_000_000_000_000)
	p.Sample(l, Amounts{corev1.ResourceCPU: 8}, start)
	if got := l.Consumed[corev1.ResourceCPU]; !near(got, 4) {
		t.Fatalf("first sample of 8 cpu with rate 0.5: %v, want 4", got)
	}
	p.AddPenalty(l, Amounts{corev1.ResourceCPU: 2}, 1)
	if got := l.Total()[corev1.ResourceCPU]; !near(got, 5) {
		t.Errorf("a 2 cpu admission adds half of it at once: total %v, want 5", got)
	}
	if p.Due(l, start+int64(9*time.Second)) {
		t.Error("a sample is due before the interval passed")
	}
	// 20 s later with nothing held: two half-lives of decay.
	at := start + int64(20*time.Second)
	if !p.Due(l, at) {
		t.Fatal("no sample due after two intervals")
	}
	p.Sample(l, nil, at)
	if got := l.Consumed[corev1.ResourceCPU]; !near(got, 1) {
		t.Errorf("after two half-lives with nothing held: %v, want 1", got)
	}
	if len(l.Penalty) != 0 || l.LastUpdate != at {
		t.Errorf("a sample drops penalties and records its time: %+v", l)
	}
}

func TestZeroHalfLifeForgets(t *testing.T) {
	p := &Params{Interval: time.Second}
	l := &Ledger{Consumed: Amounts{corev1.ResourceCPU: 30}}
	p.Sample(l, Amounts{corev1.ResourceCPU: 3}, 5)
	if len(l.Consumed) != 0 {
		t.Errorf("zero half-life keeps %v", l.Consumed)
	}
}

func TestScoreWeighsResourcesAndLocalQueues(t *testing.T) {
	p := &Params{Weights: map[corev1.ResourceName]float64{corev1.ResourceCPU: 2, corev1.ResourceMemory: 0}}
	a := Amounts{corev1.ResourceCPU: 3, corev1.ResourceMemory: 1 << 30, "example.com/gpu": 1}
	if got := p.Score(a, 1); !near(got, 7) {
		t.Errorf("score %v, want 2*3 + 0*mem + 1*1 = 7", got)
	}
	if got := p.Score(a, 2); !near(got, 3.5) {
		t.Errorf("weight 2 halves the score: %v", got)
	}
	if got := p.Score(a, 0); !math.IsInf(got, 1) {
		t.Errorf("weight 0: %v, want +Inf", got)
	}
	if got := p.Score(Amounts{}, 0); got != 0 {
		t.Errorf("weight 0 with nothing used: %v, want 0", got)
	}
}

func info(ns, lq, name string, prio int32, cpu int64) *workload.Info {
	return &workload.Info{
		Key: types.NamespacedName{Namespace: ns, Name: name}, LocalQueue: kueue.LocalQueueName(lq), Priority: prio,
		Shape: workload.NewShape([]workload.PodSetShape{{Name: "main", Count: 1,
			PerPod: resources.Requests{corev1.ResourceCPU: cpu * 1000, corev1.ResourcePods: 1000}}}),
	}
}

func names(ws []*workload.Info) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Key.Name)
	}
	return out
}

func TestOrderLetsLocalQueuesTakeTurns(t *testing.T) {
	// Queue order: a1 a2 a3 (older, or higher priority) before b1 b2.
	ws := []*workload.Info{info("ns", "a", "a1", 0, 3), info("ns", "a", "a2", 0, 3), info("ns", "a", "a3", 0, 3),
		info("ns", "b", "b1", 0, 3), info("ns", "b", "b2", 0, 3)}
	usage := map[string]float64{"a": 4, "b": 0}
	score := func(w *workload.Info) float64 { return usage[string(w.LocalQueue)] }
	cost := func(w *workload.Info) float64 { return 1.5 * Requests(w)[corev1.ResourceCPU] / 3 } // 1.5 per workload
	got := names(Order(ws, score, cost))
	// b (0) goes first; after b1 and b2 (0 -> 1.5 -> 3), a (4) still
	// waits; b runs out, then a.
	want := []string{"b1", "b2", "a1", "a2", "a3"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	usage = map[string]float64{"a": 0, "b": 0}
	got = names(Order(ws, score, cost))
	// Equal scores: the first in queue order wins, then turns.
	want = []string{"a1", "b1", "a2", "b2", "a3"}
	if !slices.Equal(got, want) {
		t.Errorf("equal usage: order %v, want %v", got, want)
	}
}

func TestOrderKeepsPreemptorsFirstAndNamespacesApart(t *testing.T) {
	p := info("ns1", "q", "preemptor", 0, 1)
	p.Preempting = true
	ws := []*workload.Info{p, info("ns1", "q", "x1", 0, 1), info("ns2", "q", "y1", 0, 1)}
	usage := map[string]float64{"ns1": 10, "ns2": 0}
	got := names(Order(ws, func(w *workload.Info) float64 { return usage[w.Key.Namespace] }, func(*workload.Info) float64 { return 0 }))
	want := []string{"preemptor", "y1", "x1"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v (a LocalQueue named q in each namespace is two LocalQueues)", got, want)
	}
	one := []*workload.Info{info("ns", "q", "1", 0, 1), info("ns", "q", "2", 0, 1)}
	if got := Order(one, func(*workload.Info) float64 { return 0 }, func(*workload.Info) float64 { return 0 }); &got[0] != &one[0] {
		t.Error("one LocalQueue: the order is the queue's, and not copied")
	}
}

func TestRequestsLeaveOutPods(t *testing.T) {
	w := info("ns", "q", "w", 0, 2)
	w.Shape.PodSets[0].Count = 3
	got := Requests(w)
	if len(got) != 1 || !near(got[corev1.ResourceCPU], 6) {
		t.Errorf("requests %v, want cpu 6 only", got)
	}
}
