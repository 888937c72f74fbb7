package driver

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// jobWorker plays the jobs: it takes workloads off the queue and finishes
// or clears them when due.
func (d *Driver) jobWorker(ctx context.Context) {
	for {
		key, quit := d.queue.Get()
		if quit {
			return
		}
		d.busy.Add(1)
		d.jobStep(ctx, key)
		d.busy.Add(-1)
		d.queue.Done(key)
	}
}

func (d *Driver) jobStep(ctx context.Context, key types.NamespacedName) {
	wl, admittedAt, runtime := d.rec.jobView(key)
	if wl == nil {
		d.queue.Forget(key)
		return
	}
	now := time.Now()
	act, left := Decide(wl, admittedAt, runtime, now)
	var st *kueue.WorkloadStatus
	switch act {
	case Wait:
		d.queue.AddAfter(key, left)
		return
	case Finish:
		st = FinishStatus(wl, now)
	case Clear:
		st = ClearStatus(wl, now)
	default:
		d.queue.Forget(key)
		return
	}
	err := d.applyStatus(ctx, wl, st)
	wrote := err == nil
	if apierrors.IsConflict(err) {
		wrote, err = d.retryLive(ctx, wl, act, now)
	}
	switch {
	case err == nil && !wrote:
		d.queue.Forget(key)
	case err == nil:
		d.queue.Forget(key)
		if act == Finish {
			d.writes.Finishes.Add(1)
			d.rec.finishWritten(key, now, time.Now())
		} else {
			d.writes.Clears.Add(1)
		}
	case apierrors.IsConflict(err):
		// The manager wrote in between and the API server's version
		// calls for something else; the informer brings it, and the step
		// is decided again on it.
		d.queue.AddRateLimited(key)
	case apierrors.IsNotFound(err) || ctx.Err() != nil:
		d.queue.Forget(key)
	default:
		d.writes.Errors.Add(1)
		log.FromContext(ctx).Error(err, "job step failed", "workload", key, "action", act.String())
		d.queue.AddRateLimited(key)
	}
}

// applyStatus server-side applies st under the admission field manager,
// with wl's UID and resourceVersion as preconditions.
func (d *Driver) applyStatus(ctx context.Context, wl *kueue.Workload, st *kueue.WorkloadStatus) error {
	body, err := ApplyBody(wl, st)
	if err != nil {
		return err
	}
	target := &kueue.Workload{}
	target.Name, target.Namespace = wl.Name, wl.Namespace
	return d.client.Status().Patch(ctx, target, client.RawPatch(types.ApplyPatchType, body),
		&client.SubResourcePatchOptions{PatchOptions: client.PatchOptions{FieldManager: AdmissionFieldManager, Force: ptr.To(true)}})
}

// retryLive handles a conflicting write: the informer is behind the API
// server. It reads the workload from the API server and, if the same
// action still applies to the same admission there, writes it against that
// version at once; otherwise it returns the conflict, and the step waits
// for the informer. Reading once is much cheaper for the API server than
// retrying a write on a stale view until the informer catches up. It
// reports whether it wrote.
func (d *Driver) retryLive(ctx context.Context, seen *kueue.Workload, act Action, now time.Time) (bool, error) {
	d.writes.Conflicts.Add(1)
	var live kueue.Workload
	if err := d.client.Get(ctx, client.ObjectKeyFromObject(seen), &live); err != nil {
		return false, err
	}
	if !sameAdmission(seen, &live) {
		return false, apierrors.NewConflict(kueue.GroupVersion.WithResource("workloads").GroupResource(), live.Name,
			fmt.Errorf("the workload changed since the harness saw it"))
	}
	var st *kueue.WorkloadStatus
	// With no runtime left, Decide says Finish for an admitted workload:
	// the runtime was already found over on the informer's view.
	switch liveAct, _ := Decide(&live, now, 0, now); {
	case liveAct == None:
		return false, nil // finished or cleared meanwhile: nothing left to do
	case liveAct != act:
		return false, apierrors.NewConflict(kueue.GroupVersion.WithResource("workloads").GroupResource(), live.Name,
			fmt.Errorf("the workload calls for %s now", liveAct))
	case act == Finish:
		st = FinishStatus(&live, now)
	default:
		st = ClearStatus(&live, now)
	}
	err := d.applyStatus(ctx, &live, st)
	return err == nil, err
}

// sameAdmission reports whether two versions of a workload carry the same
// admission (or both none), admitted at the same time.
func sameAdmission(a, b *kueue.Workload) bool {
	if !equality.Semantic.DeepEqual(a.Status.Admission, b.Status.Admission) {
		return false
	}
	ca := meta.FindStatusCondition(a.Status.Conditions, kueue.WorkloadAdmitted)
	cb := meta.FindStatusCondition(b.Status.Conditions, kueue.WorkloadAdmitted)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.LastTransitionTime.Equal(&cb.LastTransitionTime)
}
