package jobframework

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/metrics"
)

// start applies the admission to a suspended job and lifts the suspension.
func (r *Reconciler) start(ctx context.Context, job Job, wl *kueue.Workload) error {
	obj := job.Object()
	infos, err := AdmissionInfos(ctx, r.Client, wl)
	if err != nil {
		return err
	}
	if err := job.RunWithPodSetsInfo(infos); err != nil {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, "FailedToStart", "Cannot start with the admission: %v", err)
		return err
	}
	if err := r.Client.Update(ctx, obj); err != nil {
		return fmt.Errorf("starting %s: %w", obj.GetName(), err)
	}
	r.Recorder.Eventf(obj, corev1.EventTypeNormal, "Started", "Admitted by clusterQueue %s", wl.Status.Admission.ClusterQueue)
	return nil
}

// suspend stops a job. Its pod templates are restored later, once its pods
// are gone: a started job's template cannot change (batch/v1 allows it only
// while suspended and not started).
func (r *Reconciler) suspend(ctx context.Context, job Job, reason, msg string) error {
	obj := job.Object()
	job.Suspend()
	if err := r.Client.Update(ctx, obj); err != nil {
		return fmt.Errorf("suspending %s: %w", obj.GetName(), err)
	}
	r.Recorder.Event(obj, corev1.EventTypeNormal, reason, msg)
	return nil
}

// stop carries out an eviction or the Workload's deletion: the job is
// suspended; once none of its pods runs, its pod templates are restored.
// Then an evicted Workload's reservation is cleared, so that the quota
// returns and the Workload is requeued; a deleted Workload loses its
// finalizer, and its quota returns when it is gone.
func (r *Reconciler) stop(ctx context.Context, job Job, wl *kueue.Workload) (ctrl.Result, error) {
	ev := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if !job.IsSuspended() {
		msg := "The Workload is being deleted"
		if ev != nil {
			msg = ev.Message
		}
		return ctrl.Result{}, r.suspend(ctx, job, "Stopped", msg)
	}
	if job.IsActive() {
		// The job's pods are still going away; their status change
		// brings the job back here.
		return ctrl.Result{}, nil
	}
	if job.RestorePodSetsInfo(RestoreInfos(wl)) {
		if err := r.Client.Update(ctx, job.Object()); err != nil {
			return ctrl.Result{}, fmt.Errorf("restoring %s: %w", job.Object().GetName(), err)
		}
		return ctrl.Result{}, nil
	}
	if !wl.DeletionTimestamp.IsZero() {
		return r.releaseWhenPodsGone(ctx, wl, job.Object().GetUID(), false)
	}
	return ctrl.Result{}, clearEvicted(ctx, r.Writer, wl)
}

// syncRunning keeps a running job's Workload up to date: its PodsReady
// condition (with waitForPodsReady) and its reclaimable pods. A job that
// grew beyond its admission is stopped and queued again (resize), unless
// it is elastic: then its held pods are let go up to its admission.
//
// The pods of a job that are not its own (JobWithElasticPods) bring it
// back here through no event of its own: while its admission has room for
// pods not seen yet, the pass is repeated after elasticPodsPoll.
func (r *Reconciler) syncRunning(ctx context.Context, job Job, wl *kueue.Workload) (ctrl.Result, error) {
	if !r.elastic(job) { // an elastic job's counts are followed by slices (elastic.go)
		if msg, err := outgrown(job, wl); err != nil {
			return ctrl.Result{}, err
		} else if msg != "" && wl.Labels[JobUIDLabel] != "" {
			return ctrl.Result{}, r.resize(ctx, job, wl, msg)
		}
	}
	var res ctrl.Result
	if IsElastic(job.Object()) {
		// Its pods are created held (the webhook gated its template),
		// elastic here or not (a worker's copy, a prebuilt Workload).
		missing, err := r.ungate(ctx, job, wl)
		if err != nil {
			return ctrl.Result{}, err
		}
		if missing {
			res.RequeueAfter = elasticPodsPoll
		}
	}
	if r.Options.WaitForPodsReady {
		if err := r.syncPodsReady(ctx, job, wl); err != nil {
			return ctrl.Result{}, err
		}
	}
	withReclaim, ok := job.(JobWithReclaimablePods)
	if !ok {
		return res, nil
	}
	return res, syncReclaimable(ctx, r.Writer, wl, withReclaim.ReclaimablePods())
}

// outgrown says which PodSet of a running job now has more pods than its
// Workload was admitted with ("" when none): they would run beyond the
// quota. (Fewer pods, as a job nears its end, are fine.)
func outgrown(job Job, wl *kueue.Workload) (string, error) {
	if wl.Status.Admission == nil {
		return "", nil
	}
	podSets, err := job.PodSets()
	if err != nil {
		return "", err
	}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		admitted := countOf(wl, psa)
		for _, ps := range podSets {
			if ps.Name == psa.Name && ps.Count > admitted {
				return fmt.Sprintf("PodSet %s grew to %d pods while running, beyond the %d it was admitted with: the job is stopped and queued again at its new size",
					ps.Name, ps.Count, admitted), nil
			}
		}
	}
	return "", nil
}

// resized says which PodSet of a job has a pod count other than its
// Workload's spec ("" when none).
func resized(job Job, wl *kueue.Workload) (string, error) {
	podSets, err := job.PodSets()
	if err != nil {
		return "", err
	}
	for _, want := range wl.Spec.PodSets {
		for _, ps := range podSets {
			if ps.Name == want.Name && ps.Count != want.Count {
				return fmt.Sprintf("PodSet %s has %d pods, its Workload %d: the job is queued again at its new size",
					ps.Name, ps.Count, want.Count), nil
			}
		}
	}
	return "", nil
}

// resize stops a job that grew beyond its admission and deletes its
// Workload: once the job's pods are gone the Workload releases its quota
// (stop), and a new one of the new size is created and queued.
func (r *Reconciler) resize(ctx context.Context, job Job, wl *kueue.Workload, msg string) error {
	if err := r.suspend(ctx, job, "Stopped", msg); err != nil {
		return err
	}
	if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replacing Workload %s: %w", wl.Name, err)
	}
	r.Recorder.Eventf(job.Object(), corev1.EventTypeNormal, "DeletedWorkload", "The job grew while running; replacing Workload %s", wl.Name)
	return nil
}

func nonZero(list []kueue.ReclaimablePod) []kueue.ReclaimablePod {
	return slices.DeleteFunc(slices.Clone(list), func(p kueue.ReclaimablePod) bool { return p.Count == 0 })
}

// syncPodsReady keeps PodsReady in line with the job's pods.
func (r *Reconciler) syncPodsReady(ctx context.Context, job Job, wl *kueue.Workload) error {
	return syncPodsReadyCondition(ctx, r.Writer, wl, job.PodsReady())
}

// recordPodsReady observes the time to readiness.
func recordPodsReady(wl *kueue.Workload, now time.Time) {
	labels := metrics.Workload{ClusterQueue: string(wl.Status.Admission.ClusterQueue)}
	if ref := wl.Spec.PriorityClassRef; ref != nil {
		labels.PriorityClass = ref.Name
	}
	queued := wl.CreationTimestamp.Time
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil && c.Status == metav1.ConditionTrue {
		queued = c.LastTransitionTime.Time
	}
	var admitted time.Time
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadAdmitted); c != nil {
		admitted = c.LastTransitionTime.Time
	}
	metrics.PodsReady(labels, now.Sub(queued), now.Sub(admitted))
}
