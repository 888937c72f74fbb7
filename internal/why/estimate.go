package why

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/sim"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Estimate is when the workload will likely start, by the simulator run
// forward from now, and what that assumes.
type Estimate struct {
	// Known is false when the simulation did not admit the workload
	// within its horizon.
	Known bool `json:"known"`
	// StartsIn is the wait from now; At the moment.
	StartsIn   string    `json:"startsIn,omitempty"`
	Seconds    float64   `json:"seconds,omitempty"`
	At         time.Time `json:"at,omitzero"`
	Assumption string    `json:"assumption"`
}

// horizon bounds the simulation run forward.
const horizon = 30 * 24 * time.Hour

// defaultRuntime is assumed when nothing tells a workload's runtime.
const defaultRuntime = time.Hour

// runtimeSource says where a runtime estimate comes from.
type runtimeSource int

const (
	fromMaxExecution runtimeSource = iota
	fromSameShape
	fromLocalQueue
	fromCluster
	fromDefault
	sourceCount
)

// runtimes estimates workloads' total runtimes from finished ones.
type runtimes struct {
	byShape, byQueue map[string][]time.Duration
	all              []time.Duration
	fallback         time.Duration
}

func learnRuntimes(wls []kueue.Workload, fallback time.Duration) *runtimes {
	rt := &runtimes{byShape: map[string][]time.Duration{}, byQueue: map[string][]time.Duration{}, fallback: fallback}
	for i := range wls {
		wl := &wls[i]
		fin := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
		adm := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
		if fin == nil || fin.Status != "True" || adm == nil || adm.LastTransitionTime.IsZero() {
			continue
		}
		ran := fin.LastTransitionTime.Sub(adm.LastTransitionTime.Time)
		if ran < 0 {
			continue
		}
		rt.byShape[shapeKey(wl)] = append(rt.byShape[shapeKey(wl)], ran)
		rt.byQueue[queueKey(wl)] = append(rt.byQueue[queueKey(wl)], ran)
		rt.all = append(rt.all, ran)
	}
	return rt
}

// total estimates how long wl runs in all.
func (rt *runtimes) total(wl *kueue.Workload) (time.Duration, runtimeSource) {
	if m := wl.Spec.MaximumExecutionTimeSeconds; m != nil && *m > 0 {
		return time.Duration(*m) * time.Second, fromMaxExecution
	}
	if xs := rt.byShape[shapeKey(wl)]; len(xs) > 0 {
		return median(xs), fromSameShape
	}
	if xs := rt.byQueue[queueKey(wl)]; len(xs) > 0 {
		return median(xs), fromLocalQueue
	}
	if len(rt.all) > 0 {
		return median(rt.all), fromCluster
	}
	return rt.fallback, fromDefault
}

func queueKey(wl *kueue.Workload) string { return wl.Namespace + "/" + string(wl.Spec.QueueName) }

// shapeKey is the LocalQueue and the scheduler's shape of the pod sets
// (counts and per-pod requests).
func shapeKey(wl *kueue.Workload) string {
	return queueKey(wl) + "|" + workload.ShapeFromPodSets(wl.Spec.PodSets, workload.ShapeOptions{}).Key
}

func median(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// estimate runs the simulator forward from now: running workloads hold
// their quota for what is left of their estimated runtime, pending ones
// arrive now in their creation order.
func estimate(st *State, setup *sim.Setup, target types.NamespacedName, opts Options) (*Estimate, error) {
	fallback := opts.DefaultRuntime
	if fallback <= 0 {
		fallback = defaultRuntime
	}
	rt := learnRuntimes(st.Workloads, fallback)
	var trace []sim.Workload
	var running, pending [sourceCount]int
	for i := range st.Workloads {
		wl := &st.Workloads[i]
		if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) || !wl.DeletionTimestamp.IsZero() ||
			wl.Spec.QueueName == "" || lifecycle.CheckPodSets(wl) != nil {
			// Out of the picture, or nothing the scheduler could admit.
			continue
		}
		total, src := rt.total(wl)
		w := sim.Workload{Namespace: wl.Namespace, Name: wl.Name, Queue: wl.Spec.QueueName, PodSets: wl.Spec.PodSets,
			CreatedBefore: max(0, st.Now.Sub(wl.CreationTimestamp.Time)), Runtime: total}
		if m := wl.Spec.MaximumExecutionTimeSeconds; m != nil && *m > 0 {
			w.MaxExecution = time.Duration(*m) * time.Second
		}
		if wl.Spec.Priority != nil {
			w.Priority = *wl.Spec.Priority
		}
		if ref := wl.Spec.PriorityClassRef; ref != nil && ref.Kind == kueue.WorkloadPriorityClassKind {
			w.PriorityClass = ref.Name
		}
		switch {
		case lifecycle.Reserved(wl):
			w.Admission, w.RanFor = wl.Status.Admission, ranSoFar(wl, st.Now)
			w.Runtime = max(0, total-w.RanFor)
			running[src]++
		case lifecycle.Active(wl):
			pending[src]++
		default:
			continue
		}
		trace = append(trace, w)
	}
	var at time.Duration
	found := false
	simOpts := sim.Options{Scheduling: opts.Scheduling, Deadline: horizon, Lifecycle: opts.lifecycleOptions(), FairAdmission: opts.FairAdmission,
		OnDecision: func(now time.Duration, d *scheduling.Decision) {
			if !found && d.Admit && d.Workload.Key == target {
				at, found = now, true
			}
		}}
	if _, err := sim.Run(setup, trace, simOpts); err != nil {
		return nil, fmt.Errorf("estimating the start: %w", err)
	}
	est := &Estimate{Known: found, Assumption: assumption(running, pending, fallback)}
	if found {
		est.StartsIn, est.Seconds, est.At = at.Round(time.Second).String(), at.Seconds(), st.Now.Add(at)
	}
	return est, nil
}

// ranSoFar is how long a workload holding quota has held it.
func ranSoFar(wl *kueue.Workload, now time.Time) time.Duration {
	for _, typ := range []string{kueue.WorkloadAdmitted, kueue.WorkloadQuotaReserved} {
		if c := meta.FindStatusCondition(wl.Status.Conditions, typ); c != nil && c.Status == "True" {
			return max(0, now.Sub(c.LastTransitionTime.Time))
		}
	}
	return 0
}

// assumption says where the runtimes of the simulation came from.
func assumption(running, pending [sourceCount]int, fallback time.Duration) string {
	names := [sourceCount]string{
		fromMaxExecution: "their maximumExecutionTimeSeconds",
		fromSameShape:    "the median runtime of finished workloads of the same LocalQueue and shape",
		fromLocalQueue:   "the median runtime of finished workloads of their LocalQueue",
		fromCluster:      "the median runtime of all finished workloads",
		fromDefault:      fmt.Sprintf("no runtime known, %s assumed", fallback),
	}
	part := func(what string, counts [sourceCount]int) string {
		var bits []string
		for s, n := range counts {
			if n > 0 {
				bits = append(bits, fmt.Sprintf("%d by %s", n, names[s]))
			}
		}
		if len(bits) == 0 {
			return ""
		}
		return what + ": " + strings.Join(bits, ", ")
	}
	var out []string
	for _, p := range []string{part("runtimes of running workloads", running), part("of pending workloads", pending)} {
		if p != "" {
			out = append(out, p)
		}
	}
	out = append(out, "no new workloads arrive, none is deleted, and the queues stay as they are")
	return strings.Join(out, "; ")
}
