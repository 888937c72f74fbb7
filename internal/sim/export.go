package sim

import (
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// defaultRuntime is the runtime given to a workload that never ran when
// nothing of its LocalQueue ran either.
const defaultRuntime = time.Minute

// TraceFromWorkloads turns the Workloads of a live cluster into a trace:
// creation times from the first one, queue, priority, pod sets with each
// pod's requests, and runtime. A finished workload ran from its last
// admission to its end; one still running has run at least until now; one
// that never ran is given the median runtime of its LocalQueue's finished
// workloads (or of all, or a minute).
func TraceFromWorkloads(wls []kueue.Workload, now time.Time) []Workload {
	if len(wls) == 0 {
		return nil
	}
	sorted := slices.Clone(wls)
	sort.SliceStable(sorted, func(i, j int) bool {
		return sorted[i].CreationTimestamp.Before(&sorted[j].CreationTimestamp)
	})
	start := sorted[0].CreationTimestamp.Time
	out := make([]Workload, 0, len(sorted))
	known := map[kueue.LocalQueueName][]time.Duration{}
	var all []time.Duration
	var unknown []int
	for i := range sorted {
		wl := &sorted[i]
		w := Workload{Namespace: wl.Namespace, Name: wl.Name, Queue: wl.Spec.QueueName, Arrive: wl.CreationTimestamp.Sub(start),
			Class: wl.Labels[scenario.ClassLabel]}
		if wl.Spec.Priority != nil {
			w.Priority = *wl.Spec.Priority
		}
		if ref := wl.Spec.PriorityClassRef; ref != nil && ref.Kind == kueue.WorkloadPriorityClassKind {
			w.PriorityClass = ref.Name
		}
		if m := wl.Spec.MaximumExecutionTimeSeconds; m != nil {
			w.MaxExecution = time.Duration(*m) * time.Second
		}
		w.PodSets = podSetsOf(wl.Spec.PodSets)
		if ran, ok := ranFor(wl, now); ok {
			w.Runtime = ran
			if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
				known[w.Queue] = append(known[w.Queue], ran)
				all = append(all, ran)
			}
		} else {
			unknown = append(unknown, len(out))
		}
		out = append(out, w)
	}
	for _, i := range unknown {
		switch {
		case len(known[out[i].Queue]) > 0:
			out[i].Runtime = median(known[out[i].Queue])
		case len(all) > 0:
			out[i].Runtime = median(all)
		default:
			out[i].Runtime = defaultRuntime
		}
	}
	return out
}

// ranFor is how long a workload ran in its last admission.
func ranFor(wl *kueue.Workload, now time.Time) (time.Duration, bool) {
	adm := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted)
	if adm == nil || adm.LastTransitionTime.IsZero() {
		return 0, false
	}
	if fin := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished); fin != nil && fin.Status == "True" {
		return max(0, fin.LastTransitionTime.Sub(adm.LastTransitionTime.Time)), adm.Status == "True" || wl.Status.Admission != nil
	}
	if adm.Status == "True" {
		return max(0, now.Sub(adm.LastTransitionTime.Time)), true
	}
	return 0, false
}

// podSetsOf keeps what a simulation needs of pod sets: counts, and each
// pod's requests (init containers and overhead included) as one container.
func podSetsOf(in []kueue.PodSet) []kueue.PodSet {
	out := make([]kueue.PodSet, 0, len(in))
	for _, ps := range in {
		req := corev1.ResourceList{}
		// An amount that cannot be counted stays one (resources.Max), so
		// the replay refuses the workload as the manager did.
		perPod, _ := resources.PodRequests(&ps.Template.Spec)
		for name, a := range perPod {
			req[name] = resources.ToQuantity(name, a)
		}
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: req}}},
			NodeSelector: ps.Template.Spec.NodeSelector, Tolerations: ps.Template.Spec.Tolerations, Affinity: ps.Template.Spec.Affinity}
		out = append(out, kueue.PodSet{Name: ps.Name, Count: ps.Count, MinCount: ps.MinCount, Template: corev1.PodTemplateSpec{Spec: spec}})
	}
	return out
}

func median(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
