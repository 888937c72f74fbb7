package pod

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=get;patch
// +kubebuilder:rbac:groups="",resources=pods/finalizers,verbs=get;update
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/finalizers,verbs=update

// indexGroup indexes managed pods by their group name.
const indexGroup = "kuota.pod.group-name"

// Condition of a group's Workload, as Kueue names it.
const (
	conditionWaitingForReplacementPods = "WaitingForReplacementPods"
	reasonPodsFailed                   = "PodsFailed"
	reasonPodsReady                    = "PodsReady"
)

// key names what one pass reconciles: a plain pod, or a group.
type key struct {
	types.NamespacedName
	Group bool
}

// Reconciler queues plain pods and pod groups: it creates their Workloads,
// lifts the admission gate of their pods once admitted, deletes them when
// evicted, and finishes and releases their Workloads. It reads pods from
// the manager's cache, which holds the managed pods only.
type Reconciler struct {
	Client  client.Client
	Ops     *jobframework.WorkloadOps
	Options jobframework.Options
}

func setupReconciler(mgr ctrl.Manager, opts jobframework.Options) error {
	r := &Reconciler{Client: mgr.GetClient(), Ops: jobframework.NewWorkloadOps(mgr), Options: opts}
	return r.SetupWithManager(mgr)
}

// SetupWithManager indexes pods by group and watches pods and Workloads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, indexGroup, func(o client.Object) []string {
		if g := o.GetLabels()[jobframework.PodGroupNameLabel]; g != "" {
			return []string{g}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing pods by group: %w", err)
	}
	return builder.TypedControllerManagedBy[key](mgr).
		Named("pod").
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &corev1.Pod{}, handler.TypedEnqueueRequestsFromMapFunc(podKeys))).
		WatchesRawSource(source.TypedKind(mgr.GetCache(), &kueue.Workload{}, handler.TypedEnqueueRequestsFromMapFunc(workloadKeys))).
		WithOptions(controller.TypedOptions[key]{MaxConcurrentReconciles: 5, LogConstructor: func(k *key) logr.Logger {
			l := mgr.GetLogger().WithValues("controller", "pod")
			if k != nil {
				l = l.WithValues("namespace", k.Namespace, "name", k.Name, "group", k.Group)
			}
			return l
		}}).
		Complete(r)
}

func podKeys(_ context.Context, p *corev1.Pod) []key {
	if p.Labels[jobframework.ManagedLabel] != jobframework.ManagedLabelValue {
		return nil
	}
	if g := p.Labels[jobframework.PodGroupNameLabel]; g != "" {
		return []key{{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: g}, Group: true}}
	}
	return []key{{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}}
}

func workloadKeys(_ context.Context, wl *kueue.Workload) []key {
	if wl.Annotations[jobframework.IsGroupWorkloadAnnotation] == "true" {
		return []key{{NamespacedName: types.NamespacedName{Namespace: wl.Namespace, Name: wl.Name}, Group: true}}
	}
	if ref := metav1.GetControllerOfNoCopy(wl); ref != nil && ref.Kind == GVK.Kind && ref.APIVersion == "v1" {
		return []key{{NamespacedName: types.NamespacedName{Namespace: wl.Namespace, Name: ref.Name}}}
	}
	if wl.Annotations[jobframework.JobOwnerGVKAnnotation] == GVK.String() {
		return []key{{NamespacedName: types.NamespacedName{Namespace: wl.Namespace, Name: wl.Annotations[jobframework.JobOwnerNameAnnotation]}}}
	}
	return nil
}

// Reconcile takes the next step for a pod or a group.
func (r *Reconciler) Reconcile(ctx context.Context, k key) (ctrl.Result, error) {
	var res ctrl.Result
	var err error
	if k.Group {
		res, err = r.reconcileGroup(ctx, k.NamespacedName)
	} else {
		res, err = r.reconcilePod(ctx, k.NamespacedName)
	}
	return jobframework.Quiet(ctx, res, err)
}

// reconcilePod handles one plain pod: its Workloads from earlier pods of
// the same name (or its own, once the pod is gone) are released, then the
// live pod takes its next step.
func (r *Reconciler) reconcilePod(ctx context.Context, name types.NamespacedName) (ctrl.Result, error) {
	var pod corev1.Pod
	var uid types.UID
	if err := r.Client.Get(ctx, name, &pod); err == nil {
		uid = pod.UID
	} else if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err := r.releaseOthers(ctx, name, uid); err != nil || uid == "" {
		return ctrl.Result{}, err
	}
	if pod.Labels[jobframework.ManagedLabel] != jobframework.ManagedLabelValue {
		return ctrl.Result{}, nil
	}
	u := newUnit(false, pod.Name, []corev1.Pod{pod})
	wl, err := r.workload(ctx, pod.Namespace, u.workloadName())
	if err != nil {
		return ctrl.Result{}, err
	}
	if deleting(&pod) {
		// The pod is going: its end is recorded, then it may go; its
		// Workload's quota returns once it is gone.
		if wl != nil && !jobframework.IsFinished(wl) {
			if msg, ok, done := u.finished(); done {
				return ctrl.Result{}, r.Ops.Finish(ctx, wl, ok, msg, u.ready(wl))
			}
		}
		return ctrl.Result{}, r.finalizePods(ctx, u.pods)
	}
	return r.step(ctx, u, wl)
}

// releaseOthers releases the Workloads of earlier pods of that name (all
// of them when uid is empty: the pod is gone). Their pod is gone, so no
// pod of theirs runs: a finished one loses its finalizer, another one is
// also deleted.
func (r *Reconciler) releaseOthers(ctx context.Context, name types.NamespacedName, uid types.UID) error {
	var list kueue.WorkloadList
	if err := r.Client.List(ctx, &list, client.InNamespace(name.Namespace),
		client.MatchingFields{jobframework.IndexWorkloadJob: jobframework.JobIndexKey(GVK.GroupKind(), name.Name)}); err != nil {
		return fmt.Errorf("listing the Workloads of pod %s: %w", name, err)
	}
	for i := range list.Items {
		wl := &list.Items[i]
		ref := metav1.GetControllerOfNoCopy(wl)
		if ref == nil || ref.UID == uid {
			continue
		}
		if err := r.Ops.Release(ctx, wl, !jobframework.IsFinished(wl)); err != nil {
			return err
		}
	}
	return nil
}

// reconcileGroup handles the pods of one group.
func (r *Reconciler) reconcileGroup(ctx context.Context, name types.NamespacedName) (ctrl.Result, error) {
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(name.Namespace), client.MatchingFields{indexGroup: name.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the pods of group %s: %w", name, err)
	}
	pods := slices.DeleteFunc(list.Items, func(p corev1.Pod) bool {
		return p.Labels[jobframework.ManagedLabel] != jobframework.ManagedLabelValue
	})
	wlName := name.Name
	if len(pods) > 0 {
		if pb := newUnit(true, name.Name, pods).prebuilt(); pb != "" {
			wlName = pb
		}
	}
	wl, err := r.workload(ctx, name.Namespace, wlName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(pods) == 0 {
		return ctrl.Result{}, r.releaseEmptyGroup(ctx, wl)
	}
	u := newUnit(true, name.Name, pods)
	// Pods being deleted may go, but a pod that succeeded stays until its
	// group's Workload has counted it.
	finished := wl == nil || jobframework.IsFinished(wl) || u.serving()
	var going []corev1.Pod
	for _, p := range u.pods {
		if deleting(&p) && (p.Status.Phase != corev1.PodSucceeded || finished || u.allDeleting()) {
			going = append(going, p)
		}
	}
	if err := r.finalizePods(ctx, going); err != nil || u.allDeleting() {
		return ctrl.Result{}, err
	}
	return r.step(ctx, u, wl)
}

// releaseEmptyGroup handles the Workload of a group none of whose pods is
// left: its quota returns. The Workload of another controller (a
// LeaderWorkerSet's) is left to it, unless it is being deleted.
func (r *Reconciler) releaseEmptyGroup(ctx context.Context, wl *kueue.Workload) error {
	switch {
	case wl == nil:
		return nil
	case jobframework.IsFinished(wl):
		return r.Ops.DropFinalizer(ctx, wl)
	case !ownedByPods(wl):
		if wl.DeletionTimestamp.IsZero() {
			return nil
		}
		return r.Ops.Release(ctx, wl, false)
	default:
		return r.Ops.Release(ctx, wl, true)
	}
}

func ownedByPods(wl *kueue.Workload) bool {
	return slices.ContainsFunc(wl.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == GVK.Kind && o.APIVersion == "v1" })
}

func (r *Reconciler) workload(ctx context.Context, ns, name string) (*kueue.Workload, error) {
	var wl kueue.Workload
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading Workload %s: %w", name, err)
	}
	return &wl, nil
}

// workloadName is the Workload of the unit: the prebuilt one it names, the
// group's name, or the plain pod's Workload name (Kueue's).
func (u *unit) workloadName() string {
	if pb := u.prebuilt(); pb != "" {
		return pb
	}
	if u.group {
		return u.name
	}
	p := &u.pods[0]
	return jobframework.WorkloadName(p.Name, p.UID, GVK)
}

// step takes the next step for a live unit and its Workload.
func (r *Reconciler) step(ctx context.Context, u *unit, wl *kueue.Workload) (ctrl.Result, error) {
	if wl != nil && jobframework.IsFinished(wl) {
		// The quota is released: the Workload and the pods may go.
		if err := r.Ops.DropFinalizer(ctx, wl); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.finalizePods(ctx, u.pods)
	}
	if msg, ok, done := u.finished(); done {
		if wl == nil {
			return ctrl.Result{}, r.finalizePods(ctx, u.pods)
		}
		return ctrl.Result{}, r.Ops.Finish(ctx, wl, ok, msg, u.ready(wl))
	}
	if err := u.check(); err != nil {
		r.Ops.Recorder.Event(u.ref(), corev1.EventTypeWarning, "ErrWorkloadCompose", err.Error())
		return ctrl.Result{}, nil
	}
	if wl == nil {
		if u.prebuilt() != "" {
			return ctrl.Result{}, nil // its controller makes it; its creation brings the unit back
		}
		return ctrl.Result{}, r.create(ctx, u)
	}
	if done, err := r.Ops.EnsureFinalizer(ctx, wl); done || err != nil {
		return ctrl.Result{}, err
	}
	if done, err := r.tidy(ctx, u, wl); done || err != nil {
		return ctrl.Result{}, err
	}
	if !wl.DeletionTimestamp.IsZero() || jobframework.IsEvicted(wl) {
		return r.stop(ctx, u, wl)
	}
	if !u.fits(wl) {
		return ctrl.Result{}, r.replace(ctx, u, wl)
	}
	if !jobframework.IsReserved(wl) {
		if done, err := r.followPending(ctx, u, wl); done || err != nil {
			return ctrl.Result{}, err
		}
	}
	if !jobframework.IsAdmitted(wl) {
		return ctrl.Result{}, r.holdUnadmitted(ctx, u)
	}
	if wl.Status.ClusterName != nil {
		// MultiKueue runs the unit in a worker cluster: the pods here keep
		// their gate, and their status is mirrored from their copies there.
		return ctrl.Result{}, r.syncRunning(ctx, u, wl)
	}
	if done, err := r.ungate(ctx, u, wl); done || err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.syncRunning(ctx, u, wl)
}

// create makes the unit's Workload: a plain pod's is owned by the pod; a
// group's by each of its pods, and created once the group is complete (or
// at its first pod, with fast admission).
func (r *Reconciler) create(ctx context.Context, u *unit) error {
	ref := u.ref()
	podSets, err := u.podSets()
	if errors.Is(err, errTooFewPods) {
		r.Ops.Recorder.Eventf(ref, corev1.EventTypeNormal, "WaitingForPods",
			"Group %s has fewer runnable pods than its total count; waiting for the rest", u.name)
		return nil
	}
	if err != nil {
		r.Ops.Recorder.Eventf(ref, corev1.EventTypeWarning, "ErrWorkloadCompose", "Cannot build the Workload: %v", err)
		return nil
	}
	wl, err := jobframework.BuildWorkload(ctx, r.Client, ref, u.workloadName(), podSets, podIndex, r.Options)
	if err != nil {
		r.Ops.Recorder.Eventf(ref, corev1.EventTypeWarning, "ErrWorkloadCompose", "Cannot build the Workload: %v", err)
		return err
	}
	if u.group {
		wl.Annotations[jobframework.IsGroupWorkloadAnnotation] = "true"
		for i := range u.pods {
			wl.OwnerReferences = append(wl.OwnerReferences, podOwner(&u.pods[i], false))
		}
	} else {
		wl.Labels[jobframework.JobUIDLabel] = string(ref.UID)
		wl.Annotations[jobframework.JobOwnerGVKAnnotation] = GVK.String()
		wl.Annotations[jobframework.JobOwnerNameAnnotation] = ref.Name
		wl.OwnerReferences = []metav1.OwnerReference{podOwner(ref, true)}
	}
	if err := r.Client.Create(ctx, wl); err != nil && !apierrors.IsAlreadyExists(err) {
		r.Ops.Recorder.Eventf(ref, corev1.EventTypeWarning, "ErrWorkloadCreate", "Cannot create Workload %s: %v", wl.Name, err)
		return fmt.Errorf("creating Workload %s: %w", wl.Name, err)
	}
	r.Ops.Recorder.Eventf(ref, corev1.EventTypeNormal, "CreatedWorkload", "Created Workload: %s/%s", wl.Namespace, wl.Name)
	return nil
}

func podOwner(p *corev1.Pod, controls bool) metav1.OwnerReference {
	// The owner reference never blocks the pod's deletion: in a foreground
	// deletion the pod would wait for its Workload, which waits for the pod
	// to be gone before its quota returns.
	o := metav1.OwnerReference{APIVersion: "v1", Kind: GVK.Kind, Name: p.Name, UID: p.UID}
	if controls {
		o.Controller = ptr.To(true)
	}
	return o
}

// tidy keeps a group in line with its Workload: new members become owners
// of a Workload Kuota made, pods beyond the total count are deleted, and
// failed pods that were replaced may go. It reports whether it wrote.
func (r *Reconciler) tidy(ctx context.Context, u *unit, wl *kueue.Workload) (bool, error) {
	if !u.group {
		return false, nil
	}
	if ownedByPods(wl) {
		var add []metav1.OwnerReference
		for i := range u.pods {
			p := &u.pods[i]
			if !deleting(p) && !slices.ContainsFunc(wl.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == p.UID }) {
				add = append(add, podOwner(p, false))
			}
		}
		if len(add) > 0 {
			patch := client.MergeFromWithOptions(wl.DeepCopy(), client.MergeFromWithOptimisticLock{})
			wl.OwnerReferences = append(wl.OwnerReferences, add...)
			if err := r.Client.Patch(ctx, wl, patch); err != nil {
				return true, fmt.Errorf("adding owners to Workload %s: %w", wl.Name, err)
			}
			return true, nil
		}
	}
	excess := u.excess()
	for _, p := range excess {
		if err := r.finalizePods(ctx, []corev1.Pod{*p}); err != nil {
			return true, err
		}
		if err := r.Client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return true, fmt.Errorf("deleting excess pod %s: %w", p.Name, err)
		}
		r.Ops.Recorder.Event(p, corev1.EventTypeNormal, "ExcessPodDeleted", "Excess pod deleted")
	}
	var replaced []corev1.Pod
	for _, p := range u.replaced() {
		replaced = append(replaced, *p)
	}
	if err := r.finalizePods(ctx, replaced); err != nil {
		return true, err
	}
	return len(excess)+len(replaced) > 0, nil
}

// stop carries out an eviction or the Workload's deletion: the unit's
// started pods are deleted (all its pods when the Workload is deleted);
// once none runs, the eviction's reservation is cleared (the Workload is
// requeued) or the deleted Workload's finalizer goes.
func (r *Reconciler) stop(ctx context.Context, u *unit, wl *kueue.Workload) (ctrl.Result, error) {
	removed := !wl.DeletionTimestamp.IsZero()
	msg := "The Workload is being deleted"
	if !removed {
		msg = "Evicted: the Workload's quota reservation was taken back"
	}
	for i := range u.pods {
		p := &u.pods[i]
		if deleting(p) || (!removed && (jobframework.IsGated(p) || jobframework.IsTerminal(p))) {
			continue
		}
		if removed && jobframework.IsGated(p) && !slices.ContainsFunc(wl.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == p.UID }) {
			continue // a new member waiting for the next Workload
		}
		if err := r.deletePod(ctx, p, msg); err != nil {
			return ctrl.Result{}, err
		}
	}
	if u.anyRunning() {
		return ctrl.Result{RequeueAfter: jobframework.PodsPoll}, nil
	}
	if removed {
		return ctrl.Result{}, r.Ops.Release(ctx, wl, false)
	}
	return ctrl.Result{}, r.Ops.ClearEvicted(ctx, wl)
}

// deletePod marks a pod TerminationTarget and deletes it.
func (r *Reconciler) deletePod(ctx context.Context, p *corev1.Pod, msg string) error {
	orig := p.DeepCopy()
	cond := corev1.PodCondition{Type: jobframework.PodTerminationTarget, Status: corev1.ConditionTrue,
		Reason: "StoppedByKueue", Message: msg, LastTransitionTime: metav1.Now()}
	i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == cond.Type })
	if i < 0 {
		p.Status.Conditions = append(p.Status.Conditions, cond)
		if err := r.Client.Status().Patch(ctx, p, client.StrategicMergeFrom(orig)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("marking pod %s for termination: %w", p.Name, err)
		}
	}
	if err := r.Client.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting pod %s: %w", p.Name, err)
	}
	r.Ops.Recorder.Event(p, corev1.EventTypeNormal, "Stopped", msg)
	return nil
}

// replace deletes a Workload that no longer describes its group (a
// StatefulSet grew past its admitted size, the pods changed shape): the
// group is stopped and queued again as it is now.
func (r *Reconciler) replace(ctx context.Context, u *unit, wl *kueue.Workload) error {
	if u.prebuilt() != "" {
		return nil // its controller keeps it in line
	}
	if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replacing Workload %s: %w", wl.Name, err)
	}
	r.Ops.Recorder.Eventf(u.ref(), corev1.EventTypeNormal, "DeletedWorkload",
		"Group %s changed; its Workload %s is replaced", u.name, wl.Name)
	return nil
}

// followPending copies a changed queue name or priority to a pending
// Workload.
func (r *Reconciler) followPending(ctx context.Context, u *unit, wl *kueue.Workload) (bool, error) {
	want, err := jobframework.BuildWorkload(ctx, r.Client, u.ref(), wl.Name, slices.Clone(wl.Spec.PodSets), nil, r.Options)
	if err != nil {
		return false, nil //nolint:nilerr // a priority class that does not resolve keeps the Workload as it is
	}
	return r.Ops.FollowPending(ctx, wl, want)
}

// holdUnadmitted deletes pods that run although their Workload is not
// admitted (someone lifted the gate by hand, past the webhook).
func (r *Reconciler) holdUnadmitted(ctx context.Context, u *unit) error {
	for i := range u.pods {
		p := &u.pods[i]
		if jobframework.IsGated(p) || jobframework.IsTerminal(p) || deleting(p) {
			continue
		}
		if err := r.deletePod(ctx, p, "Not admitted by cluster queue"); err != nil {
			return err
		}
	}
	return nil
}

// ungate lifts the admission gate of the unit's gated pods, with the
// admission applied. It reports whether it wrote.
func (r *Reconciler) ungate(ctx context.Context, u *unit, wl *kueue.Workload) (bool, error) {
	var infos []jobframework.PodSetInfo
	wrote := false
	for i := range u.pods {
		p := &u.pods[i]
		if !jobframework.IsGated(p) || deleting(p) {
			continue
		}
		if infos == nil {
			var err error
			if infos, err = jobframework.AdmissionInfos(ctx, r.Client, wl); err != nil {
				return true, err
			}
		}
		info, err := u.infoFor(p, infos)
		if err == nil {
			err = applyAdmission(p, info)
		}
		if err != nil {
			r.Ops.Recorder.Eventf(p, corev1.EventTypeWarning, "FailedToStart", "Cannot start with the admission: %v", err)
			return true, nil
		}
		if err := r.Client.Update(ctx, p); err != nil {
			return true, fmt.Errorf("ungating pod %s: %w", p.Name, err)
		}
		r.Ops.Recorder.Eventf(p, corev1.EventTypeNormal, "Started", "Admitted by clusterQueue %s", wl.Status.Admission.ClusterQueue)
		wrote = true
	}
	return wrote, nil
}

// syncRunning keeps an admitted Workload up to date: whether a group waits
// for replacement pods, PodsReady (with waitForPodsReady), reclaimable
// pods.
func (r *Reconciler) syncRunning(ctx context.Context, u *unit, wl *kueue.Workload) error {
	if u.group && !u.serving() {
		if n := u.absent(); n > 0 {
			if err := r.Ops.SetJobCondition(ctx, wl, conditionWaitingForReplacementPods, metav1.ConditionTrue,
				reasonPodsFailed, "Some Failed pods need replacement"); err != nil {
				return err
			}
		} else if hasTrue(wl, conditionWaitingForReplacementPods) {
			if err := r.Ops.SetJobCondition(ctx, wl, conditionWaitingForReplacementPods, metav1.ConditionFalse,
				reasonPodsReady, "No pods need replacement"); err != nil {
				return err
			}
		}
	}
	if r.Options.WaitForPodsReady {
		if err := r.Ops.SyncPodsReady(ctx, wl, u.ready(wl)); err != nil {
			return err
		}
	}
	return r.Ops.SyncReclaimable(ctx, wl, u.reclaimable(wl))
}

func hasTrue(wl *kueue.Workload, typ string) bool {
	for _, c := range wl.Status.Conditions {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// finalizePods removes the pod finalizer from those pods that have it.
func (r *Reconciler) finalizePods(ctx context.Context, pods []corev1.Pod) error {
	for i := range pods {
		p := &pods[i]
		if !hasPodFinalizer(p) {
			continue
		}
		patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.RemoveFinalizer(p, jobframework.PodFinalizer)
		if err := r.Client.Patch(ctx, p, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing the finalizer of pod %s: %w", p.Name, err)
		}
	}
	return nil
}
