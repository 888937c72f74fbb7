package jobframework

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/resources"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;patch

// An elastic job (annotation kueue.ElasticJobAnnotation "true", on a kind
// with Integration.Elastic) may change its pod counts while it runs,
// without being stopped (docs/design/elastic.md):
//
//   - fewer pods: the running Workload's counts and admission are lowered
//     in place, and the quota of the pods gone returns at once;
//   - more pods: a new Workload slice of the job's whole new size is
//     created, naming the running one in
//     kueue.WorkloadSliceReplacementForAnnotation. It waits in the queue
//     for the pods it adds only, on the running slice's flavors; once it is
//     admitted the running slice is finished (WorkloadSliceReplaced) and
//     the job's pods count in the new one.
//
// The job's pod template carries kueue.ElasticJobSchedulingGate (the
// webhook adds it), so every pod is created held; the reconciler lifts the
// gate of as many pods as the admitted slice counts, oldest first. A job
// has at most two unfinished slices: the admitted one and the one that
// will replace it.

// IsElastic reports whether the object opts in to elastic pod counts.
func IsElastic(obj metav1.Object) bool {
	return obj.GetAnnotations()[kueue.ElasticJobAnnotation] == "true"
}

// elastic reports whether the job's pod counts may change while it runs
// (with the feature on, for a kind that may; see SlicesFollow).
func (r *Reconciler) elastic(job Job) bool {
	return r.Options.ElasticJobs && r.Integration.Elastic && SlicesFollow(job)
}

// SlicesFollow reports whether an elastic job's Workload slices follow its
// pod counts. A job MultiKueue runs in a worker's do not: its slices would
// not reach the worker. Nor do those of a job that names a prebuilt
// Workload (the worker's copy of such a job among them): that one Workload
// is the job's.
func SlicesFollow(job Job) bool {
	if !IsElastic(job.Object()) || job.Object().GetLabels()[PrebuiltWorkloadLabel] != "" {
		return false
	}
	m, ok := job.(JobWithManagedBy)
	return !ok || m.ManagedBy() == nil || *m.ManagedBy() != MultiKueueManagedBy
}

// SliceWorkloadName is the name of the Workload slice of a job that comes
// after the slice named after (the one it replaces, or the last finished
// one): WorkloadName's form, with that name in the hash. Each slice has
// one successor at a time, so names never repeat along a job's slices,
// even when the job's own generation does not change (a RayJob's cluster
// resized by the Ray autoscaler).
func SliceWorkloadName(jobName string, uid types.UID, gvk schema.GroupVersionKind, after string) string {
	return WorkloadName(jobName, types.UID(fmt.Sprintf("%s/%s", uid, after)), gvk)
}

// elasticWorkload finds the Workload an elastic job runs or waits under,
// after taking the one step the job's slices need, if any: it reports
// whether it acted (then the pass ends there).
func (r *Reconciler) elasticWorkload(ctx context.Context, job Job) (*kueue.Workload, bool, error) {
	live, finished, err := r.jobSlices(ctx, job.Object())
	if err != nil {
		return nil, true, err
	}
	for _, wl := range finished {
		if hasFinalizer(wl) {
			return nil, true, r.dropFinalizer(ctx, wl)
		}
	}
	switch len(live) {
	case 0:
		if _, _, over := job.Finished(); len(finished) > 0 && !over {
			// The first slice's name is taken by a finished slice.
			return nil, true, r.createSlice(ctx, job, nil, newest(finished).Name)
		}
		return nil, false, nil
	case 1:
		return r.oneSlice(ctx, job, live[0])
	case 2:
		return r.twoSlices(ctx, job, live[0], live[1])
	}
	// Only a slice and the one replacing it count; older ones are stale.
	return nil, true, r.finishSlice(ctx, live[0], kueue.WorkloadFinishedOutOfSync,
		"The job has newer Workload slices: "+live[len(live)-1].Name)
}

// oneSlice handles a job's only slice: a waiting one follows the job's
// counts; a running one follows them when the job shrinks, and a slice of
// the new size is made when it grows.
func (r *Reconciler) oneSlice(ctx context.Context, job Job, wl *kueue.Workload) (*kueue.Workload, bool, error) {
	if !wl.DeletionTimestamp.IsZero() {
		return wl, false, nil
	}
	want, err := podCounts(job)
	if err != nil {
		return nil, true, err
	}
	if !reserved(wl) {
		// A waiting slice follows the job's counts in place (it keeps its
		// place in the queue).
		if have := specCounts(wl); sameNames(want, have) && !equalCounts(want, have) {
			return nil, true, r.recount(ctx, wl, want)
		}
		return wl, false, nil
	}
	if job.IsSuspended() || !IsAdmitted(wl) || isEvicted(wl) {
		return wl, false, nil
	}
	held := admittedCounts(wl)
	if !sameNames(want, held) {
		return wl, false, nil
	}
	if grows(want, held) {
		return nil, true, r.createSlice(ctx, job, wl, wl.Name)
	}
	if !equalCounts(want, held) || !equalCounts(want, specCounts(wl)) {
		return nil, true, r.shrink(ctx, job, wl, want)
	}
	return wl, false, nil
}

// twoSlices handles a job with an admitted slice (old) and the slice that
// replaces it (next).
func (r *Reconciler) twoSlices(ctx context.Context, job Job, old, next *kueue.Workload) (*kueue.Workload, bool, error) {
	switch {
	case reserved(next):
		// Admitted as the replacement; the scheduler's write that
		// finishes the old slice did not land.
		return nil, true, r.finishSlice(ctx, old, kueue.WorkloadSliceReplaced,
			apply.SliceReplacedMessage(next))
	case !reserved(old):
		return nil, true, r.finishSlice(ctx, old, kueue.WorkloadFinishedOutOfSync,
			"The job's newer Workload slice "+next.Name+" takes its place")
	case job.IsSuspended() || !IsAdmitted(old) || !old.DeletionTimestamp.IsZero() || isEvicted(old):
		// The job stops, or starts, under the admitted slice.
		return old, false, nil
	}
	want, err := podCounts(job)
	if err != nil {
		return nil, true, err
	}
	if held := admittedCounts(old); sameNames(want, held) && !grows(want, held) {
		// Back within the running slice: the new one is not needed.
		return nil, true, r.dropSlice(ctx, job, next)
	}
	if !equalCounts(want, specCounts(next)) {
		return nil, true, r.recount(ctx, next, want)
	}
	return old, false, nil
}

// jobSlices lists the Workloads the job controls: the unfinished ones in
// slice order (a slice before the one replacing it, else oldest first),
// and the finished ones.
func (r *Reconciler) jobSlices(ctx context.Context, obj client.Object) (live, finished []*kueue.Workload, err error) {
	var list kueue.WorkloadList
	if err := r.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace()),
		client.MatchingFields{IndexWorkloadJob: jobIndexKey(r.Integration.GVK.GroupKind(), obj.GetName())}); err != nil {
		return nil, nil, fmt.Errorf("listing the Workloads of %s: %w", obj.GetName(), err)
	}
	for i := range list.Items {
		wl := &list.Items[i]
		if !metav1.IsControlledBy(wl, obj) {
			continue
		}
		if isFinished(wl) {
			finished = append(finished, wl)
		} else {
			live = append(live, wl)
		}
	}
	slices.SortFunc(live, compareSlices)
	return live, finished, nil
}

// compareSlices orders a slice before the one that replaces it, else by
// creation time and name.
func compareSlices(a, b *kueue.Workload) int {
	switch {
	case b.Annotations[kueue.WorkloadSliceReplacementForAnnotation] == a.Namespace+"/"+a.Name:
		return -1
	case a.Annotations[kueue.WorkloadSliceReplacementForAnnotation] == b.Namespace+"/"+b.Name:
		return 1
	}
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// newest is the last of finished slices in slice order.
func newest(finished []*kueue.Workload) *kueue.Workload {
	return slices.MaxFunc(finished, compareSlices)
}

// createSlice creates a Workload slice of the job's current size that
// replaces old (none when nil), named after the slice it follows.
func (r *Reconciler) createSlice(ctx context.Context, job Job, old *kueue.Workload, after string) error {
	obj := job.Object()
	wl, err := NewWorkload(ctx, r.Client, job, r.Integration.GVK, r.Options)
	if err != nil {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, "ErrWorkloadCompose", "Cannot build the Workload: %v", err)
		return err
	}
	wl.Name = SliceWorkloadName(obj.GetName(), obj.GetUID(), r.Integration.GVK, after)
	msg := fmt.Sprintf("Created Workload: %s/%s", wl.Namespace, wl.Name)
	if old != nil {
		// The running job's templates carry what its admission injected;
		// the slice keeps the job's own, which the running slice holds.
		if err := r.keepTemplates(ctx, wl, old); err != nil {
			return err
		}
		wl.Annotations[kueue.WorkloadSliceReplacementForAnnotation] = old.Namespace + "/" + old.Name
		root := old.Annotations[kueue.WorkloadSliceNameAnnotation]
		if root == "" {
			root = old.Name
		}
		wl.Annotations[kueue.WorkloadSliceNameAnnotation] = root
		msg = fmt.Sprintf("Created Workload slice %s/%s for the job's new size; it replaces %s once admitted", wl.Namespace, wl.Name, old.Name)
	}
	if err := r.Client.Create(ctx, wl); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, "ErrWorkloadCreate", "Cannot create Workload %s: %v", wl.Name, err)
		return fmt.Errorf("creating Workload %s: %w", wl.Name, err)
	}
	r.Recorder.Event(obj, corev1.EventTypeNormal, "CreatedWorkload", msg)
	return nil
}

// keepTemplates gives a new slice the pod templates of the slice it
// replaces (read from the API server: the cache's copy lacks most of them).
func (r *Reconciler) keepTemplates(ctx context.Context, wl, old *kueue.Workload) error {
	live, err := r.liveWorkload(ctx, old)
	if err != nil {
		return err
	}
	if live == nil || len(live.Spec.PodSets) != len(wl.Spec.PodSets) {
		return fmt.Errorf("reading Workload %s: it changed meanwhile", old.Name)
	}
	for i := range wl.Spec.PodSets {
		if live.Spec.PodSets[i].Name != wl.Spec.PodSets[i].Name {
			return fmt.Errorf("Workload %s has other PodSets than the job", old.Name)
		}
		wl.Spec.PodSets[i].Template = live.Spec.PodSets[i].Template
	}
	return nil
}

// shrink lowers the counts of a running slice, in its spec and then in its
// admission, so that the quota of the pods the job no longer runs returns.
// It works on the object read from the API server: the cached one lacks
// the pod templates an update must carry.
func (r *Reconciler) shrink(ctx context.Context, job Job, cached *kueue.Workload, want map[kueue.PodSetReference]int32) error {
	wl, err := r.liveWorkload(ctx, cached)
	if err != nil || wl == nil || !reserved(wl) {
		return err
	}
	changed := false
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		if n, ok := want[ps.Name]; ok && n < ps.Count {
			ps.Count, changed = n, true
		}
	}
	if changed {
		if err := r.Client.Update(ctx, wl); err != nil {
			return fmt.Errorf("lowering the counts of Workload %s: %w", wl.Name, err)
		}
		r.Recorder.Eventf(job.Object(), corev1.EventTypeNormal, "ScaledDown", "Workload %s lowered to the job's new size", wl.Name)
		return nil
	}
	st := apply.AdmissionStatus(wl)
	for i := range st.Admission.PodSetAssignments {
		lowerAssignment(&st.Admission.PodSetAssignments[i], want)
	}
	if err := r.Writer.WorkloadStatus(ctx, wl, st, apply.AdmissionManager); err != nil {
		return fmt.Errorf("lowering the admission of Workload %s: %w", wl.Name, err)
	}
	return nil
}

// lowerAssignment lowers a PodSet's admitted count to want's, with its
// usage in proportion.
func lowerAssignment(psa *kueue.PodSetAssignment, want map[kueue.PodSetReference]int32) {
	n, ok := want[psa.Name]
	if !ok || psa.Count == nil || *psa.Count <= n || *psa.Count == 0 {
		return
	}
	for r, perPod := range lifecycle.PerPod(psa) {
		psa.ResourceUsage[r] = resources.ToQuantity(r, perPod*int64(n))
	}
	psa.Count = &n
}

// recount sets the counts of a slice that waits to the job's.
func (r *Reconciler) recount(ctx context.Context, cached *kueue.Workload, want map[kueue.PodSetReference]int32) error {
	wl, err := r.liveWorkload(ctx, cached)
	if err != nil || wl == nil || reserved(wl) {
		return err
	}
	for i := range wl.Spec.PodSets {
		if n, ok := want[wl.Spec.PodSets[i].Name]; ok {
			wl.Spec.PodSets[i].Count = n
		}
	}
	if err := r.Client.Update(ctx, wl); err != nil {
		return fmt.Errorf("updating the counts of Workload slice %s: %w", wl.Name, err)
	}
	return nil
}

// dropSlice deletes a waiting slice the job no longer needs.
func (r *Reconciler) dropSlice(ctx context.Context, job Job, wl *kueue.Workload) error {
	if err := r.dropFinalizer(ctx, wl); err != nil {
		return err
	}
	if err := r.Client.Delete(ctx, wl, client.Preconditions{UID: &wl.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Workload slice %s: %w", wl.Name, err)
	}
	r.Recorder.Eventf(job.Object(), corev1.EventTypeNormal, "DeletedWorkload", "The job fits its running Workload again; deleted Workload slice %s", wl.Name)
	return nil
}

// finishSlice marks a slice Finished with reason and message.
func (r *Reconciler) finishSlice(ctx context.Context, wl *kueue.Workload, reason, msg string) error {
	if err := r.Writer.WorkloadStatus(ctx, wl, apply.Finished(wl, reason, msg, metav1.Now()), apply.AdmissionManager); err != nil {
		return fmt.Errorf("finishing Workload slice %s: %w", wl.Name, err)
	}
	return nil
}

// liveWorkload reads the Workload from the API server; nil when it is gone
// or is another object of the same name.
func (r *Reconciler) liveWorkload(ctx context.Context, cached *kueue.Workload) (*kueue.Workload, error) {
	var wl kueue.Workload
	if err := r.apiReader().Get(ctx, client.ObjectKeyFromObject(cached), &wl); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if wl.UID != cached.UID {
		return nil, nil
	}
	return &wl, nil
}

// apiReader is APIReader, or Client when it is not set.
func (r *Reconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
