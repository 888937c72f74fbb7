package multicluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/controller"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/multikueue"
)

// stopWait is how often a workload that gave its quota back is looked at
// until its job in the manager is suspended.
const stopWait = time.Second

// WorkloadReconciler dispatches the workloads of ClusterQueues with a
// MultiKueue check.
type WorkloadReconciler struct {
	Client client.Client
	// APIReader reads a Workload whole when it is copied (the cache keeps
	// parts of it trimmed).
	APIReader client.Reader
	Writer    *apply.Writer
	Recorder  record.EventRecorder
	Remotes   *Remotes
	// Kinds are the job kinds MultiKueue runs, by GVK.
	Kinds map[schema.GroupVersionKind]jobframework.Integration
	// Pods says plain pods and pod groups run in workers too.
	Pods bool
	// SpecSync carries the spec edits kinds forward (JobWithRemoteSpec)
	// to the worker's running job.
	SpecSync          bool
	WorkerLostTimeout time.Duration
	Dispatch          multikueue.Dispatch
}

// SetupWithManager registers the reconciler: Workloads with checks, and
// the changes of their copies in the workers.
func (r *WorkloadReconciler) SetupWithManager(mgr ctrl.Manager) error {
	b := ctrl.NewControllerManagedBy(mgr).Named("multikueue-workload").
		For(&kueue.Workload{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			wl, ok := obj.(*kueue.Workload)
			return ok && (len(wl.Status.AdmissionChecks) > 0 || wl.Status.ClusterName != nil)
		}))).
		WatchesRawSource(source.Channel(r.Remotes.Events, &handler.EnqueueRequestForObject{})).
		WithOptions(ctrlcontroller.Options{MaxConcurrentReconciles: 5})
	if r.SpecSync {
		// A spec edit of a kind that forwards it brings its workload back.
		for gvk, in := range r.Kinds {
			if _, ok := in.NewJob(nil).(jobframework.JobWithRemoteSpec); !ok {
				continue
			}
			b = b.Watches(in.NewJob(nil).Object(), handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
				name := o.GetLabels()[jobframework.PrebuiltWorkloadLabel]
				if name == "" {
					name = jobframework.WorkloadName(o.GetName(), o.GetUID(), gvk)
				}
				return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
			}), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
		}
	}
	return b.Complete(r)
}

// Reconcile decides for one workload and carries the decision out.
func (r *WorkloadReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := r.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		// Gone here: its copies and jobs in the workers go too, also in a
		// worker whose watch reported a copy before it answered a ping.
		for _, cl := range r.Remotes.Active() {
			if err := r.deleteRemote(ctx, cl, req.Namespace, req.Name); err != nil {
				return ctrl.Result{}, err
			}
		}
		if r.Remotes.Connecting() {
			return ctrl.Result{RequeueAfter: connectingWait}, nil
		}
		return ctrl.Result{}, nil
	}
	check, cfg, err := r.checkOf(ctx, &wl)
	if err != nil || check == "" {
		return ctrl.Result{}, err
	}
	clients := r.Remotes.Active()
	active := map[string]bool{}
	for name := range clients {
		active[name] = true
	}
	job, err := r.localJob(ctx, &wl)
	if err != nil {
		return ctrl.Result{}, err
	}
	pods := podsOf{remote: map[string][]corev1.Pod{}}
	if job == nil {
		if pods.local, pods.is, err = r.localPods(ctx, &wl); err != nil {
			return ctrl.Result{}, err
		}
	}
	in := multikueue.Input{Workload: &wl, Check: check, Clusters: multikueue.Usable(cfg, active),
		Remotes: map[string]multikueue.Remote{}, WorkerLostTimeout: r.WorkerLostTimeout, Dispatch: r.Dispatch, Now: time.Now()}
	if wl.Status.ClusterName != nil {
		in.LostSince = r.Remotes.LostSince(*wl.Status.ClusterName)
	}
	remoteJobs := map[string]client.Object{}
	unreadable := false
	for name, cl := range clients {
		if !slices.Contains(in.Clusters, name) && ptr.Deref(wl.Status.ClusterName, "") != name {
			// Only the check's clusters are the workload's business.
			delete(clients, name)
			continue
		}
		var rem multikueue.Remote
		if pods.is {
			rem, pods.remote[name], err = r.readRemotePods(ctx, cl, &wl, pods.local)
		} else {
			rem, remoteJobs[name], err = r.readRemote(ctx, cl, &wl, job)
		}
		if err != nil {
			if ptr.Deref(wl.Status.ClusterName, "") == name {
				return ctrl.Result{}, fmt.Errorf("reading worker cluster %s: %w", name, err)
			}
			// One worker that does not answer does not hold dispatch to
			// the others back: it is left out of this pass as if it were
			// disconnected, and the workload is looked at again soon.
			ctrl.LoggerFrom(ctx).Info("Leaving a worker cluster out of this pass: reading it failed", "cluster", name, "error", err.Error())
			r.Remotes.Unanswered(name, err)
			delete(clients, name)
			in.Clusters = slices.DeleteFunc(in.Clusters, func(c string) bool { return c == name })
			unreadable = true
			continue
		}
		in.Remotes[name] = rem
	}
	d := multikueue.Decide(in)
	if job == nil && !pods.is && (len(d.CreateWorkload) > 0 || d.CreateJob != "" || d.ClusterName != nil) {
		d = multikueue.Decision{State: rejection(&wl, check)}
	}
	if len(d.Delete) > 0 || d.CreateJob != "" || d.ClusterName != nil {
		// What a worker loses or gains is decided on the Workload as the
		// API server has it: a cached one a step behind (placed a moment
		// ago) would see the copy it runs on as one left over.
		if current, err := r.current(ctx, &wl); err != nil || !current {
			return ctrl.Result{RequeueAfter: staleWait}, err
		}
	}
	res, err := r.act(ctx, &wl, job, pods, clients, remoteJobs, d)
	if err != nil {
		return controller.Outcome(ctx, err)
	}
	if unreadable && (res.RequeueAfter == 0 || res.RequeueAfter > unreadableWait) {
		res.RequeueAfter = unreadableWait
	}
	return res, nil
}

// unreadableWait is how soon a workload is looked at again after a worker
// was left out of a pass because reading it failed.
const unreadableWait = 5 * time.Second

// connectingWait is how often a deleted Workload's copies are looked for
// again while a worker is still connecting.
const connectingWait = time.Second

// staleWait is how long a reconcile that read a Workload older than the
// API server's waits for the cache to catch up (its change also brings the
// Workload back).
const staleWait = 200 * time.Millisecond

// current says whether the cached Workload is the API server's (same
// resourceVersion); only the metadata is read.
func (r *WorkloadReconciler) current(ctx context.Context, wl *kueue.Workload) (bool, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(kueue.GroupVersion.WithKind("Workload"))
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(wl), m); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return m.ResourceVersion == wl.ResourceVersion, nil
}

// rejection is the Rejected state of a workload MultiKueue cannot run:
// it has no job of a kind MultiKueue runs.
func rejection(wl *kueue.Workload, check kueue.AdmissionCheckReference) *kueue.AdmissionCheckState {
	for _, st := range wl.Status.AdmissionChecks {
		if st.Name == check {
			out := st.DeepCopy()
			out.State, out.LastTransitionTime = kueue.CheckStateRejected, metav1.Now()
			out.Message = "MultiKueue cannot run this workload in a worker cluster: it does not belong to a job of a kind MultiKueue runs"
			return out
		}
	}
	return nil
}

// act carries a decision out: deletions, copies, the job, the mirrored
// status, then one status write.
func (r *WorkloadReconciler) act(ctx context.Context, wl *kueue.Workload, job jobframework.JobWithRemote, pods podsOf,
	clients map[string]client.Client, remoteJobs map[string]client.Object, d multikueue.Decision) (ctrl.Result, error) {
	for _, c := range d.Delete {
		if err := r.deleteRemote(ctx, clients[c], wl.Namespace, wl.Name); err != nil {
			return ctrl.Result{}, fmt.Errorf("worker cluster %s: %w", c, err)
		}
	}
	if len(d.CreateWorkload) > 0 {
		if err := r.createCopies(ctx, wl, clients, d.CreateWorkload); err != nil {
			return ctrl.Result{}, err
		}
	}
	if pods.is {
		if err := r.actOnPods(ctx, wl, pods, clients, d); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		if d.CreateJob != "" {
			if err := r.createJob(ctx, wl, job, clients[d.CreateJob], d.CreateJob); err != nil {
				return ctrl.Result{}, err
			}
		}
		if err := r.syncJob(ctx, job, remoteJobs[d.SyncFrom]); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.syncSpec(ctx, job, clients[d.SyncFrom], remoteJobs[d.SyncFrom], d.SyncFrom); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.writeStatus(ctx, wl, d); err != nil {
		return ctrl.Result{}, err
	}
	if d.ClusterName != nil {
		r.Recorder.Eventf(wl, corev1.EventTypeNormal, "MultiKueue", "Admitted in worker cluster %q", *d.ClusterName)
		if adm := wl.Status.Admission; adm != nil {
			metrics.MultiKueueAdmitted(string(adm.ClusterQueue), *d.ClusterName)
		}
	}
	if d.Stopping && job != nil && !job.IsSuspended() {
		return ctrl.Result{RequeueAfter: stopWait}, nil
	}
	return ctrl.Result{RequeueAfter: d.After}, nil
}

// checkOf returns the workload's MultiKueue check and its config; "" when
// it has none.
func (r *WorkloadReconciler) checkOf(ctx context.Context, wl *kueue.Workload) (kueue.AdmissionCheckReference, *kueue.MultiKueueConfig, error) {
	for _, st := range wl.Status.AdmissionChecks {
		var ac kueue.AdmissionCheck
		if err := r.Client.Get(ctx, client.ObjectKey{Name: string(st.Name)}, &ac); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return "", nil, err
		}
		if !ours(&ac) {
			continue
		}
		cfg, err := configOf(ctx, r.Client, &ac)
		return st.Name, cfg, err
	}
	return "", nil, nil
}

// localJob returns the workload's job in the manager, nil when it has
// none of a kind MultiKueue runs.
func (r *WorkloadReconciler) localJob(ctx context.Context, wl *kueue.Workload) (jobframework.JobWithRemote, error) {
	owner := metav1.GetControllerOf(wl)
	if owner == nil {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return nil, nil
	}
	in, ok := r.Kinds[gv.WithKind(owner.Kind)]
	if !ok {
		return nil, nil
	}
	job, ok := in.NewJob(nil).(jobframework.JobWithRemote)
	if !ok {
		return nil, nil
	}
	obj := job.Object()
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: owner.Name}, obj); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if obj.GetUID() != owner.UID {
		return nil, nil
	}
	return job, nil
}

// readRemote reads a worker's copy of the workload and its job (only what
// this manager created there counts).
func (r *WorkloadReconciler) readRemote(ctx context.Context, cl client.Client, wl *kueue.Workload, job jobframework.JobWithRemote) (multikueue.Remote, client.Object, error) {
	var out multikueue.Remote
	var err error
	if out.Workload, err = r.readCopy(ctx, cl, wl); err != nil {
		return out, nil, err
	}
	if job == nil {
		return out, nil, nil
	}
	obj := job.RemoteCopy()
	switch err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); {
	case err == nil:
		if r.mine(obj) && obj.GetLabels()[jobframework.PrebuiltWorkloadLabel] == wl.Name {
			out.Job = true
			return out, obj, nil
		}
	case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		return out, nil, err
	}
	return out, nil, nil
}

// readCopy reads a worker's copy of the workload: nil when there is
// none this manager created.
func (r *WorkloadReconciler) readCopy(ctx context.Context, cl client.Client, wl *kueue.Workload) (*kueue.Workload, error) {
	var rw kueue.Workload
	if err := cl.Get(ctx, client.ObjectKeyFromObject(wl), &rw); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if !r.mine(&rw) {
		return nil, nil
	}
	return &rw, nil
}

func (r *WorkloadReconciler) mine(obj client.Object) bool {
	return obj.GetLabels()[kueue.MultiKueueOriginLabel] == r.Remotes.Origin
}

// deleteRemote deletes what this manager created in a worker for the
// workload: its copy, and the jobs that use it.
func (r *WorkloadReconciler) deleteRemote(ctx context.Context, cl client.Client, ns, name string) error {
	var rw kueue.Workload
	err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rw)
	switch {
	case err == nil && r.mine(&rw):
		if err := cl.Delete(ctx, &rw, client.Preconditions{UID: &rw.UID}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the Workload copy %s/%s: %w", ns, name, err)
		}
	case err != nil && !apierrors.IsNotFound(err):
		return err
	}
	sel := client.MatchingLabels{kueue.MultiKueueOriginLabel: r.Remotes.Origin, jobframework.PrebuiltWorkloadLabel: name}
	for _, in := range r.Kinds {
		obj := in.NewJob(nil).Object()
		err := cl.DeleteAllOf(ctx, obj, client.InNamespace(ns), sel, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			return fmt.Errorf("deleting the %s of Workload %s/%s: %w", in.GVK.Kind, ns, name, err)
		}
	}
	if r.Pods {
		if err := cl.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), sel); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the pods of Workload %s/%s: %w", ns, name, err)
		}
	}
	return nil
}

// createCopies creates the workload's copies in the workers, from the
// whole Workload as the API server has it.
func (r *WorkloadReconciler) createCopies(ctx context.Context, cached *kueue.Workload, clients map[string]client.Client, clusters []string) error {
	var wl kueue.Workload
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), &wl); err != nil {
		return fmt.Errorf("reading Workload %s/%s: %w", cached.Namespace, cached.Name, err)
	}
	if wl.UID != cached.UID {
		return nil
	}
	for _, c := range clusters {
		cp := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Name: wl.Name,
			Labels: maps.Clone(wl.Labels), Annotations: maps.Clone(wl.Annotations)}, Spec: *wl.Spec.DeepCopy()}
		if cp.Labels == nil {
			cp.Labels = map[string]string{}
		}
		if cp.Annotations == nil {
			cp.Annotations = map[string]string{}
		}
		delete(cp.Labels, jobframework.JobUIDLabel)
		cp.Labels[kueue.MultiKueueOriginLabel] = r.Remotes.Origin
		cp.Annotations[kueue.MultiKueueOriginUIDAnnotation] = string(wl.UID)
		if err := clients[c].Create(ctx, cp); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			r.Recorder.Eventf(cached, corev1.EventTypeWarning, "MultiKueueDispatchFailed", "Cannot copy the workload to worker cluster %q: %v", c, err)
			return fmt.Errorf("creating the Workload copy in worker cluster %s: %w", c, err)
		}
		if adm := wl.Status.Admission; adm != nil {
			metrics.MultiKueueDispatched(string(adm.ClusterQueue), c)
		}
	}
	return nil
}

// createJob creates the job in the worker that reserved quota, with the
// manager's pod templates as the job's own (an admission in the manager
// changed them).
func (r *WorkloadReconciler) createJob(ctx context.Context, cached *kueue.Workload, job jobframework.JobWithRemote, cl client.Client, cluster string) error {
	src := job
	if !job.IsSuspended() {
		var wl kueue.Workload
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(cached), &wl); err != nil {
			return fmt.Errorf("reading Workload %s/%s: %w", cached.Namespace, cached.Name, err)
		}
		gvk := metav1.GetControllerOf(cached)
		in := r.Kinds[schema.FromAPIVersionAndKind(gvk.APIVersion, gvk.Kind)]
		src = in.NewJob(job.Object().DeepCopyObject().(client.Object)).(jobframework.JobWithRemote)
		src.RestorePodSetsInfo(jobframework.RestoreInfos(&wl))
	}
	obj := src.RemoteCopy()
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[jobframework.PrebuiltWorkloadLabel] = cached.Name
	labels[kueue.MultiKueueOriginLabel] = r.Remotes.Origin
	obj.SetLabels(labels)
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[kueue.MultiKueueOriginUIDAnnotation] = string(job.Object().GetUID())
	obj.SetAnnotations(ann)
	if err := cl.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		r.Recorder.Eventf(cached, corev1.EventTypeWarning, "MultiKueueDispatchFailed", "Cannot create the job in worker cluster %q: %v", cluster, err)
		return fmt.Errorf("creating the job in worker cluster %s: %w", cluster, err)
	}
	return nil
}

// syncJob mirrors the worker job's status into the manager's running job,
// and clears the running counts of a stopped job whose worker job is gone.
func (r *WorkloadReconciler) syncJob(ctx context.Context, job jobframework.JobWithRemote, remote client.Object) error {
	if job == nil {
		return nil
	}
	var changed bool
	switch {
	case remote != nil && !job.IsSuspended():
		changed = job.SyncStatus(remote)
	case remote == nil && job.IsSuspended():
		changed = job.ClearStatus()
	}
	if !changed {
		return nil
	}
	if err := r.Client.Status().Update(ctx, job.Object()); err != nil {
		return fmt.Errorf("mirroring the worker's job status into %s: %w", job.Object().GetName(), err)
	}
	return nil
}

// syncSpec carries the spec edits a kind forwards to the worker's running
// job, when SpecSync is on.
func (r *WorkloadReconciler) syncSpec(ctx context.Context, job jobframework.JobWithRemote, cl client.Client, remote client.Object, cluster string) error {
	js, ok := job.(jobframework.JobWithRemoteSpec)
	if !ok || !r.SpecSync || remote == nil || cl == nil || !js.SyncSpec(remote) {
		return nil
	}
	if err := cl.Update(ctx, remote); err != nil {
		return fmt.Errorf("updating the job's spec in worker cluster %s: %w", cluster, err)
	}
	r.Recorder.Eventf(job.Object(), corev1.EventTypeNormal, "MultiKueueSpecSynced", "The job's spec change was carried to worker cluster %q", cluster)
	return nil
}

// writeStatus writes the placement and the check's state, when they
// change.
func (r *WorkloadReconciler) writeStatus(ctx context.Context, wl *kueue.Workload, d multikueue.Decision) error {
	st := apply.AdmissionStatus(wl)
	changed := false
	switch {
	case d.ClusterName != nil:
		st.ClusterName, st.NominatedClusterNames, changed = d.ClusterName, nil, true
	case d.ClearPlacement:
		st.ClusterName, st.NominatedClusterNames, changed = nil, nil, true
	case d.Nominate != nil:
		st.NominatedClusterNames, changed = slices.Clone(d.Nominate), true
		if len(d.Nominate) == 0 {
			st.NominatedClusterNames = nil
		}
	}
	if adm := st.Admission; adm != nil && len(d.Topology) > 0 {
		for i := range adm.PodSetAssignments {
			if ta, ok := d.Topology[adm.PodSetAssignments[i].Name]; ok {
				adm.PodSetAssignments[i].TopologyAssignment = ta
				adm.PodSetAssignments[i].DelayedTopologyRequest = ptr.To(kueue.DelayedTopologyRequestStateReady)
				changed = true
			}
		}
	}
	if d.State != nil {
		for i := range st.AdmissionChecks {
			if st.AdmissionChecks[i].Name == d.State.Name {
				st.AdmissionChecks[i], changed = *d.State, true
			}
		}
	}
	if !changed {
		return nil
	}
	return r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager)
}
