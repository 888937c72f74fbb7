package jobframework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// JobWithElasticPods is an elastic job whose pods are not its own: their
// controller is another object it made (a RayJob's pods belong to the
// RayCluster the Ray operator made for it).
type JobWithElasticPods interface {
	Job
	// ElasticPods returns the labels that select the job's held pods in
	// its namespace (nil while it has none) and the PodSets they make up.
	ElasticPods() (map[string]string, []kueue.PodSetReference)
}

// elasticPodsPoll is how often a running elastic job whose pods are not
// its own looks for pods its admission has room for and that have not
// appeared yet.
const elasticPodsPoll = 5 * time.Second

// ungate lifts kueue.ElasticJobSchedulingGate from as many of an elastic
// job's held pods as the admitted slice wl counts beyond the pods already
// free, per PodSet, oldest first. A pod that has not ended counts, even
// while it is being deleted (it may still run). Pods are read from the API
// server; the Job's status changes as its controller creates them, which
// brings the job back here. It reports whether the admission has room for
// pods not seen yet.
func (r *Reconciler) ungate(ctx context.Context, job Job, wl *kueue.Workload) (bool, error) {
	if wl.Status.Admission == nil {
		return false, nil
	}
	pods, watched, err := r.elasticPods(ctx, job, wl.Namespace)
	if err != nil {
		return false, err
	}
	room := admittedCounts(wl)
	held := map[kueue.PodSetReference][]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if terminal(p) {
			continue
		}
		ps, ok := podSetOf(p, room)
		if !ok {
			continue
		}
		if hasGate(p.Spec.SchedulingGates, kueue.ElasticJobSchedulingGate) {
			held[ps] = append(held[ps], p)
		} else {
			room[ps]--
		}
	}
	missing := false
	for ps, n := range room {
		list := held[ps]
		missing = missing || (int(n) > len(list) && slices.Contains(watched, ps))
		slices.SortFunc(list, func(a, b *corev1.Pod) int {
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		for _, p := range list[:max(0, min(int(n), len(list)))] {
			if err := r.liftGate(ctx, p); err != nil {
				return false, err
			}
		}
	}
	return missing, nil
}

// elasticPods lists the pods of an elastic job: those its
// JobWithElasticPods labels select (with the PodSets they make up), or
// those it controls (no PodSets: they bring the job back themselves).
func (r *Reconciler) elasticPods(ctx context.Context, job Job, ns string) ([]corev1.Pod, []kueue.PodSetReference, error) {
	j, ok := job.(JobWithElasticPods)
	if !ok {
		pods, err := r.jobPods(ctx, ns, job.Object().GetUID())
		return pods, nil, err
	}
	sel, podSets := j.ElasticPods()
	if sel == nil {
		return nil, podSets, nil
	}
	var pods corev1.PodList
	if err := r.apiReader().List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(sel)); err != nil {
		return nil, nil, fmt.Errorf("listing the pods of %s: %w", job.Object().GetName(), err)
	}
	return pods.Items, podSets, nil
}

// podSetOf is the PodSet of a job's pod: its PodSetLabel, or the job's only
// PodSet.
func podSetOf(p *corev1.Pod, sets counts) (kueue.PodSetReference, bool) {
	if name, ok := p.Labels[PodSetLabel]; ok {
		_, known := sets[kueue.PodSetReference(name)]
		return kueue.PodSetReference(name), known
	}
	if len(sets) == 1 {
		for name := range sets {
			return name, true
		}
	}
	return "", false
}

// liftGate removes the elastic gate from a pod, failing if the pod changed
// since it was read.
func (r *Reconciler) liftGate(ctx context.Context, p *corev1.Pod) error {
	patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
	RemoveGate(p, kueue.ElasticJobSchedulingGate)
	if err := r.Client.Patch(ctx, p, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("lifting the elastic gate of pod %s: %w", p.Name, err)
	}
	return nil
}
