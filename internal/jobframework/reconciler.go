package jobframework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors;workloadpriorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler keeps one kind of job and its Workload in step. It is
// level-triggered: each pass reads the job and its Workload and takes the
// one next step.
type Reconciler struct {
	Client client.Client
	// APIReader reads from the API server (the manager's API reader): the
	// pods of a job, so that no pod informer is started, and the whole
	// Workload an update must carry (the cached one is trimmed). Client
	// when nil.
	APIReader   client.Reader
	Writer      *apply.Writer
	Recorder    record.EventRecorder
	Integration Integration
	Options     Options
	// Concurrency is the number of parallel reconciles (default 5).
	Concurrency int
}

// SetupWithManager registers the reconciler: it watches the job kind and
// the Workloads of its jobs. The IndexWorkloadJob field index must be
// registered (SetupControllers does).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	workers := r.Concurrency
	if workers <= 0 {
		workers = 5
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("job-"+r.Integration.GVK.Kind).
		For(r.Integration.NewJob(nil).Object()).
		Watches(&kueue.Workload{}, handler.EnqueueRequestsFromMapFunc(r.jobOfWorkload))
	if p, ok := r.Integration.NewJob(nil).(JobWithPrerequisites); ok {
		for _, w := range p.PrerequisiteWatches(mgr.GetCache()) {
			b = b.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Jobs))
		}
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: workers}).Complete(r)
}

// Reconcile takes the next step for one job. The Workloads of the job's
// name that the job does not control (it is gone, being deleted, or was
// recreated) are finalized first.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := r.reconcile(ctx, req)
	return quiet(ctx, res, err)
}

// quiet turns the errors that resolve themselves into a retry without a
// "Reconciler error": a conflict (the object changed meanwhile; retried
// shortly on a fresh read) and NotFound (it went away).
func quiet(ctx context.Context, res ctrl.Result, err error) (ctrl.Result, error) {
	switch {
	case err == nil:
		return res, nil
	case apierrors.IsNotFound(err):
		return res, nil
	case apierrors.IsConflict(err):
		ctrl.LoggerFrom(ctx).V(2).Info("object changed meanwhile; retrying on a fresh read", "error", err.Error())
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return res, err
}

// conflictRetry is how soon a write that lost a race is tried again.
const conflictRetry = 100 * time.Millisecond

func (r *Reconciler) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	job := r.Integration.NewJob(nil)
	obj := job.Object()
	var live client.Object
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err == nil {
		if obj.GetDeletionTimestamp().IsZero() {
			live = obj
		}
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	res, err := r.finalizeOthers(ctx, req.NamespacedName, live)
	if err != nil || live == nil {
		return res, err
	}
	next, err := r.reconcileJob(ctx, job)
	if next.RequeueAfter > 0 && (res.RequeueAfter == 0 || next.RequeueAfter < res.RequeueAfter) {
		res = next
	}
	return res, err
}

// reconcileJob takes the next step for a live job and its own Workload.
func (r *Reconciler) reconcileJob(ctx context.Context, job Job) (ctrl.Result, error) {
	obj := job.Object()
	if managed, err := r.Options.Managed(ctx, r.Client, obj); err != nil || !managed {
		return ctrl.Result{}, err
	}
	if err := loadPrerequisites(ctx, r.Client, job); err != nil {
		return ctrl.Result{}, err
	}
	var wl *kueue.Workload
	var err error
	if r.elastic(job) {
		var acted bool
		if wl, acted, err = r.elasticWorkload(ctx, job); acted || err != nil {
			return ctrl.Result{}, err
		}
	} else if wl, err = r.workloadOf(ctx, obj); err != nil {
		return ctrl.Result{}, err
	}
	if owner := foreignController(wl, obj); owner != nil {
		// Another object's Workload is not the job's: as if missing, and
		// never finished, released or started through.
		return ctrl.Result{RequeueAfter: foreignRetry}, r.refuseForeign(ctx, job, wl, owner)
	}
	if wl != nil && isFinished(wl) && hasFinalizer(wl) {
		// The workload controller has released the quota.
		return ctrl.Result{}, r.dropFinalizer(ctx, wl)
	}
	if msg, success, finished := job.Finished(); finished {
		return ctrl.Result{}, r.finish(ctx, job, wl, msg, success)
	}
	if wl != nil && isFinished(wl) {
		// A finished Workload is over: the job is not admitted, compared
		// or stopped through it again (the cache's copy of it lacks its
		// pod templates).
		return ctrl.Result{}, nil
	}
	if prebuilt := obj.GetLabels()[PrebuiltWorkloadLabel]; prebuilt != "" {
		if wl == nil {
			// The named Workload is created by someone else; its creation
			// brings the job back here (through the Workload watch once it
			// is owned, or the job's next change).
			return ctrl.Result{RequeueAfter: prebuiltRetry}, r.holdJob(ctx, job)
		}
		if done, err := r.adopt(ctx, obj, wl); done || err != nil {
			return ctrl.Result{}, err
		}
	} else if wl == nil {
		return ctrl.Result{}, r.createWorkload(ctx, job)
	}
	if done, err := r.ensureFinalizer(ctx, wl); done || err != nil {
		return ctrl.Result{}, err
	}
	if !wl.DeletionTimestamp.IsZero() || isEvicted(wl) {
		return r.stop(ctx, job, wl)
	}
	if !reserved(wl) {
		if done, err := r.syncPending(ctx, job, wl); done || err != nil {
			return ctrl.Result{}, err
		}
	}
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) {
		if !job.IsSuspended() {
			return ctrl.Result{}, r.suspend(ctx, job, "Stopped", "Not admitted by cluster queue")
		}
		if !job.IsActive() && job.RestorePodSetsInfo(RestoreInfos(wl)) {
			return ctrl.Result{}, r.Client.Update(ctx, job.Object())
		}
		return ctrl.Result{}, nil
	}
	if job.IsSuspended() {
		msg, err := resized(job, wl)
		if err != nil {
			return ctrl.Result{}, err
		}
		if msg != "" && wl.Labels[JobUIDLabel] != "" {
			// The Workload no longer describes the job (or is a stale copy
			// of one being replaced): starting the job from it would undo
			// the job's change.
			return ctrl.Result{}, r.resize(ctx, job, wl, msg)
		}
		return ctrl.Result{}, r.start(ctx, job, wl)
	}
	return r.syncRunning(ctx, job, wl)
}

// workloadOf returns the job's Workload, or nil when there is none yet.
func (r *Reconciler) workloadOf(ctx context.Context, obj client.Object) (*kueue.Workload, error) {
	name := obj.GetLabels()[PrebuiltWorkloadLabel]
	if name == "" {
		name = WorkloadName(obj.GetName(), obj.GetUID(), r.Integration.GVK)
	}
	var wl kueue.Workload
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Workload %s: %w", name, err)
	}
	return &wl, nil
}

// prebuiltRetry is how often a job waits for its prebuilt Workload.
const prebuiltRetry = 5 * time.Second

// holdJob suspends a job that runs without its Workload.
func (r *Reconciler) holdJob(ctx context.Context, job Job) error {
	if job.IsSuspended() {
		return nil
	}
	job.Suspend()
	if err := r.Client.Update(ctx, job.Object()); err != nil {
		return fmt.Errorf("suspending %s: %w", job.Object().GetName(), err)
	}
	r.Recorder.Event(job.Object(), corev1.EventTypeNormal, "Stopped", "Suspended until its Workload exists and is admitted")
	return nil
}

// foreignRetry is how often a job that names another object's Workload
// looks again (that object may let it go, or the job may name another).
const foreignRetry = 30 * time.Second

// foreignController returns the controller owner of wl when it is not obj:
// a prebuilt Workload another job (or object) controls. nil when wl is
// nil, has no controller or obj controls it.
func foreignController(wl *kueue.Workload, obj client.Object) *metav1.OwnerReference {
	if wl == nil {
		return nil
	}
	if ref := metav1.GetControllerOfNoCopy(wl); ref != nil && ref.UID != obj.GetUID() {
		return ref
	}
	return nil
}

// refuseForeign keeps a job that names a Workload another object controls
// from running on that Workload's quota: it is suspended (unless it is
// over), and a warning names the label and the Workload's owner.
func (r *Reconciler) refuseForeign(ctx context.Context, job Job, wl *kueue.Workload, owner *metav1.OwnerReference) error {
	if _, _, finished := job.Finished(); finished {
		return nil
	}
	obj := job.Object()
	msg := fmt.Sprintf("Workload %s named by label %s is controlled by %s %s; the job stays suspended until it names a Workload of its own",
		wl.Name, PrebuiltWorkloadLabel, owner.Kind, owner.Name)
	if !job.IsSuspended() {
		job.Suspend()
		if err := r.Client.Update(ctx, obj); err != nil {
			return fmt.Errorf("suspending %s: %w", obj.GetName(), err)
		}
	}
	r.Recorder.Event(obj, corev1.EventTypeWarning, PrebuiltWorkloadInUseReason, msg)
	return nil
}

// PrebuiltWorkloadInUseReason is the reason of the warning on a job whose
// prebuilt-workload-name label names a Workload another object controls.
const PrebuiltWorkloadInUseReason = "PrebuiltWorkloadInUse"

// adopt makes the job the controller owner of its prebuilt Workload, so
// that Workload changes reach the job and the Workload goes with it, and
// adds the finalizer. It reports whether it wrote.
func (r *Reconciler) adopt(ctx context.Context, obj client.Object, wl *kueue.Workload) (bool, error) {
	// A Workload another object controls never gets here
	// (foreignController).
	if metav1.IsControlledBy(wl, obj) {
		return false, nil
	}
	gvk := r.Integration.GVK
	// A patch, not an update: the cached Workload lacks what the manager
	// does not read (internal/app trims its cache), which an update would
	// write back as removed.
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	wl.OwnerReferences = append(wl.OwnerReferences, metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	})
	if wl.DeletionTimestamp.IsZero() && !isFinished(wl) {
		controllerutil.AddFinalizer(wl, kueue.ResourceInUseFinalizerName)
	}
	if err := r.Client.Patch(ctx, wl, patch); err != nil {
		return true, fmt.Errorf("adopting prebuilt Workload %s: %w", wl.Name, err)
	}
	return true, nil
}

// createWorkload creates the job's Workload, suspending the job first if
// it runs (it must not run before it is admitted).
func (r *Reconciler) createWorkload(ctx context.Context, job Job) error {
	obj := job.Object()
	if !job.IsSuspended() {
		job.Suspend()
		if err := r.Client.Update(ctx, obj); err != nil {
			return fmt.Errorf("suspending %s: %w", obj.GetName(), err)
		}
		r.Recorder.Event(obj, corev1.EventTypeNormal, "Stopped", "Suspended until a Workload is admitted")
		return nil
	}
	wl, err := NewWorkload(ctx, r.Client, job, r.Integration.GVK, r.Options)
	if err != nil {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, "ErrWorkloadCompose", "Cannot build the Workload: %v", err)
		if isMissingPrerequisite(err) {
			// A watch of the missing object brings the job back.
			return nil
		}
		return err
	}
	if err := r.Client.Create(ctx, wl); err != nil && !apierrors.IsAlreadyExists(err) {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, "ErrWorkloadCreate", "Cannot create Workload %s: %v", wl.Name, err)
		return fmt.Errorf("creating Workload %s: %w", wl.Name, err)
	}
	r.Recorder.Eventf(obj, corev1.EventTypeNormal, "CreatedWorkload", "Created Workload: %s/%s", wl.Namespace, wl.Name)
	return nil
}

// syncPending keeps an unreserved Workload in line with its suspended job:
// a changed queue name or priority is copied; changed PodSets replace the
// Workload. It reports whether it acted.
func (r *Reconciler) syncPending(ctx context.Context, job Job, wl *kueue.Workload) (bool, error) {
	if !job.IsSuspended() {
		return false, nil
	}
	want, err := NewWorkload(ctx, r.Client, job, r.Integration.GVK, r.Options)
	if isMissingPrerequisite(err) {
		// The Workload stays as it is until the object is back.
		return true, nil
	}
	if err != nil {
		return true, err
	}
	if wl.Labels[JobUIDLabel] != "" && !EquivalentPodSets(want.Spec.PodSets, wl.Spec.PodSets) {
		if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
			return true, fmt.Errorf("replacing Workload %s: %w", wl.Name, err)
		}
		r.Recorder.Eventf(job.Object(), corev1.EventTypeNormal, "DeletedWorkload", "The job changed; replacing Workload %s", wl.Name)
		return true, nil
	}
	gates, gatesChanged := remainingGates(wl, want)
	if wl.Spec.QueueName == want.Spec.QueueName && samePriority(wl, want) && !gatesChanged {
		return false, nil
	}
	patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
	wl.Spec.QueueName = want.Spec.QueueName
	if want.Spec.PriorityClassRef != nil {
		wl.Spec.PriorityClassRef, wl.Spec.Priority = want.Spec.PriorityClassRef, want.Spec.Priority
	}
	if gatesChanged {
		if len(gates) == 0 {
			delete(wl.Annotations, kueue.AdmissionGatedByAnnotation)
		} else {
			wl.Annotations[kueue.AdmissionGatedByAnnotation] = strings.Join(gates, ",")
		}
	}
	if err := r.Client.Patch(ctx, wl, patch); err != nil {
		return true, fmt.Errorf("updating Workload %s: %w", wl.Name, err)
	}
	return true, nil
}

// remainingGates returns the Workload's admission gates that the job
// still has, and whether some were removed from the job: removing a gate
// from the job removes it from the Workload (gates are never added after
// creation).
func remainingGates(have, want *kueue.Workload) ([]string, bool) {
	haveGates, wantGates := lifecycle.AdmissionGates(have), lifecycle.AdmissionGates(want)
	var keep []string
	for _, g := range haveGates {
		if slices.Contains(wantGates, g) {
			keep = append(keep, g)
		}
	}
	return keep, len(keep) != len(haveGates)
}

func samePriority(have, want *kueue.Workload) bool {
	if want.Spec.PriorityClassRef == nil {
		return true
	}
	return have.Spec.PriorityClassRef != nil && *have.Spec.PriorityClassRef == *want.Spec.PriorityClassRef &&
		have.Spec.Priority != nil && *have.Spec.Priority == *want.Spec.Priority
}

// reserved reports whether the Workload holds a quota reservation.
func reserved(wl *kueue.Workload) bool {
	return wl.Status.Admission != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

// isEvicted reports an eviction the job has not completed yet.
func isEvicted(wl *kueue.Workload) bool {
	return reserved(wl) && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

// finish records that the job ended.
func (r *Reconciler) finish(ctx context.Context, job Job, wl *kueue.Workload, msg string, success bool) error {
	if wl == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
		return nil
	}
	return finishWorkload(ctx, r.Writer, wl, success, msg, job.PodsReady())
}
