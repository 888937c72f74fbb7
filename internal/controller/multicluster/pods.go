package multicluster

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/multikueue"
)

// +kubebuilder:rbac:groups="",resources=pods/status,verbs=get;update;patch

// WorkerPodLabel marks the pods MultiKueue creates in a worker.
const WorkerPodLabel = jobframework.MultiKueueWorkerPodLabel

// Plain pods (one pod, or a pod group) run in a worker as copies: the
// manager's pods keep their admission gate for good, and the status of
// each worker pod is mirrored into the manager pod of the same name, so
// the manager's pod integration sees them run, finish or fail.

// podsOf holds a plain-pod workload's pods: the manager's, and each
// worker's copies.
type podsOf struct {
	is     bool
	local  []corev1.Pod
	remote map[string][]corev1.Pod
}

// actOnPods carries out the part of a decision about the pods: copies
// made, status mirrored, or forgotten once the workload stopped.
func (r *WorkloadReconciler) actOnPods(ctx context.Context, wl *kueue.Workload, pods podsOf, clients map[string]client.Client, d multikueue.Decision) error {
	if d.CreateJob != "" {
		if err := r.createPods(ctx, wl, pods.local, pods.remote[d.CreateJob], clients[d.CreateJob], d.CreateJob); err != nil {
			return err
		}
	}
	switch {
	case d.SyncFrom != "":
		return r.syncPods(ctx, pods.local, pods.remote[d.SyncFrom])
	case d.Stopping || (wl.Status.ClusterName == nil && d.ClusterName == nil):
		// Not running in any worker (any more): the pods wait.
		return r.clearPods(ctx, pods.local)
	}
	return nil
}

// localPods returns the manager's pods of a plain-pod workload, and
// whether the workload is one.
func (r *WorkloadReconciler) localPods(ctx context.Context, wl *kueue.Workload) ([]corev1.Pod, bool, error) {
	if !r.Pods {
		return nil, false, nil
	}
	if wl.Annotations[jobframework.IsGroupWorkloadAnnotation] == "true" {
		var list corev1.PodList
		if err := r.Client.List(ctx, &list, client.InNamespace(wl.Namespace),
			client.MatchingLabels{jobframework.PodGroupNameLabel: wl.Name}); err != nil {
			return nil, true, fmt.Errorf("listing the pods of group %s: %w", wl.Name, err)
		}
		return list.Items, true, nil
	}
	owner := metav1.GetControllerOf(wl)
	if owner == nil || owner.Kind != "Pod" || owner.APIVersion != "v1" {
		return nil, false, nil
	}
	var p corev1.Pod
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: owner.Name}, &p); err != nil {
		return nil, true, client.IgnoreNotFound(err)
	}
	if p.UID != owner.UID {
		return nil, true, nil
	}
	return []corev1.Pod{p}, true, nil
}

// readRemotePods reads a worker's copy of the workload and its pods; Job
// says that every manager pod that still counts has its copy there.
func (r *WorkloadReconciler) readRemotePods(ctx context.Context, cl client.Client, wl *kueue.Workload, local []corev1.Pod) (multikueue.Remote, []corev1.Pod, error) {
	var out multikueue.Remote
	var err error
	if out.Workload, err = r.readCopy(ctx, cl, wl); err != nil {
		return out, nil, err
	}
	var list corev1.PodList
	if err := cl.List(ctx, &list, client.InNamespace(wl.Namespace), client.MatchingLabels{
		kueue.MultiKueueOriginLabel: r.Remotes.Origin, jobframework.PrebuiltWorkloadLabel: wl.Name}); err != nil {
		return out, nil, err
	}
	out.Job = len(list.Items) > 0 && len(missingPods(local, list.Items)) == 0
	return out, list.Items, nil
}

// missingPods are the manager's pods that should run in the worker and
// have no copy there.
func missingPods(local, remote []corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range local {
		p := &local[i]
		if !p.DeletionTimestamp.IsZero() || jobframework.IsTerminal(p) {
			continue
		}
		if !slices.ContainsFunc(remote, func(rp corev1.Pod) bool { return rp.Name == p.Name }) {
			out = append(out, p)
		}
	}
	return out
}

// createPods creates the copies of the manager's pods that the worker
// lacks. A copy keeps the admission gate: the worker's Kuota lifts it once
// the worker admits its copy of the Workload.
func (r *WorkloadReconciler) createPods(ctx context.Context, wl *kueue.Workload, local, remote []corev1.Pod, cl client.Client, cluster string) error {
	for _, p := range missingPods(local, remote) {
		cp := workerPod(p, wl.Name, r.Remotes.Origin)
		if err := cl.Create(ctx, cp); err != nil && !apierrors.IsAlreadyExists(err) {
			r.Recorder.Eventf(wl, corev1.EventTypeWarning, "MultiKueueDispatchFailed", "Cannot create pod %s in worker cluster %q: %v", p.Name, cluster, err)
			return fmt.Errorf("creating pod %s in worker cluster %s: %w", p.Name, cluster, err)
		}
	}
	return nil
}

// workerPod is the copy of a manager pod made in a worker.
func workerPod(p *corev1.Pod, workload, origin string) *corev1.Pod {
	cp := jobframework.WorkerCopy(p).(*corev1.Pod)
	cp.Status = corev1.PodStatus{}
	cp.Spec.NodeName = ""
	if cp.Labels == nil {
		cp.Labels = map[string]string{}
	}
	cp.Labels[jobframework.PrebuiltWorkloadLabel] = workload
	cp.Labels[kueue.MultiKueueOriginLabel] = origin
	cp.Labels[WorkerPodLabel] = "true"
	if cp.Annotations == nil {
		cp.Annotations = map[string]string{}
	}
	cp.Annotations[kueue.MultiKueueOriginUIDAnnotation] = string(p.UID)
	return cp
}

// syncPods mirrors the status of each worker pod into the manager pod of
// its name. Worker pods being stopped are not mirrored: the manager decides
// about its own pods once its workload is evicted.
func (r *WorkloadReconciler) syncPods(ctx context.Context, local, remote []corev1.Pod) error {
	for i := range local {
		p := &local[i]
		j := slices.IndexFunc(remote, func(rp corev1.Pod) bool { return rp.Name == p.Name })
		if j < 0 || jobframework.IsTerminal(p) || !remote[j].DeletionTimestamp.IsZero() || stoppedByKueue(&remote[j]) {
			continue
		}
		if err := r.writePodStatus(ctx, p, mirrored(&remote[j].Status)); err != nil {
			return err
		}
	}
	return nil
}

// clearPods forgets what was mirrored into the manager's pods that have
// not ended, once their workload gave its quota back: they wait again.
func (r *WorkloadReconciler) clearPods(ctx context.Context, local []corev1.Pod) error {
	for i := range local {
		p := &local[i]
		if jobframework.IsTerminal(p) || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.writePodStatus(ctx, p, waiting(&p.Status)); err != nil {
			return err
		}
	}
	return nil
}

// writePodStatus writes a manager pod's status when it differs.
func (r *WorkloadReconciler) writePodStatus(ctx context.Context, p *corev1.Pod, st corev1.PodStatus) error {
	if equality.Semantic.DeepEqual(p.Status, st) {
		return nil
	}
	p.Status = st
	if err := r.Client.Status().Update(ctx, p); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("mirroring the worker's status into pod %s: %w", p.Name, err)
	}
	return nil
}

// mirrored is the part of a worker pod's status that describes its run;
// what belongs to the worker's network (addresses) is left out.
func mirrored(st *corev1.PodStatus) corev1.PodStatus {
	return corev1.PodStatus{Phase: st.Phase, Conditions: st.Conditions, Message: st.Message, Reason: st.Reason,
		StartTime: st.StartTime, InitContainerStatuses: st.InitContainerStatuses, ContainerStatuses: st.ContainerStatuses,
		QOSClass: st.QOSClass}
}

// waiting is the status of a gated pod that has not run.
func waiting(st *corev1.PodStatus) corev1.PodStatus {
	if st.Phase == corev1.PodPending && st.StartTime == nil && len(st.ContainerStatuses) == 0 && len(st.InitContainerStatuses) == 0 &&
		!slices.ContainsFunc(st.Conditions, func(c corev1.PodCondition) bool {
			return c.Type != corev1.PodScheduled || c.Status == corev1.ConditionTrue
		}) {
		return *st
	}
	out := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: st.QOSClass}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodScheduled {
			c.Status, c.Reason, c.Message = corev1.ConditionFalse, corev1.PodReasonSchedulingGated, "Scheduling is blocked due to non-empty scheduling gates"
			out.Conditions = append(out.Conditions, c)
		}
	}
	return out
}

func stoppedByKueue(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
		return c.Type == jobframework.PodTerminationTarget && c.Status == corev1.ConditionTrue
	})
}
