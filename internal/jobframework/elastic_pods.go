package jobframework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ungate lifts kueue.ElasticJobSchedulingGate from as many of an elastic
// job's held pods as the admitted slice wl counts beyond the pods already
// free, per PodSet, oldest first. A pod that has not ended counts, even
// while it is being deleted (it may still run). Pods are read from the API
// server; the Job's status changes as its controller creates them, which
// brings the job back here.
func (r *Reconciler) ungate(ctx context.Context, job Job, wl *kueue.Workload) error {
	if wl.Status.Admission == nil {
		return nil
	}
	pods, err := r.jobPods(ctx, wl.Namespace, job.Object().GetUID())
	if err != nil {
		return err
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
	for ps, list := range held {
		slices.SortFunc(list, func(a, b *corev1.Pod) int {
			if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(a.Name, b.Name)
		})
		for _, p := range list[:max(0, min(int(room[ps]), len(list)))] {
			if err := r.liftGate(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
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
