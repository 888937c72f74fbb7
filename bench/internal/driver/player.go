package driver

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	switch {
	case err == nil:
		d.queue.Forget(key)
		if act == Finish {
			d.writes.Finishes.Add(1)
		} else {
			d.writes.Clears.Add(1)
		}
	case apierrors.IsConflict(err):
		// The manager wrote in between; the informer brings the new
		// version, and the step is decided again on it.
		d.writes.Conflicts.Add(1)
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
