// Package topologyungater lifts the kueue.x-k8s.io/topology scheduling
// gate of the pods of topology-aware admissions. Such pods are created
// gated and labelled kueue.x-k8s.io/tas=true (jobframework.AdmissionInfos;
// the pod webhook gates plain pods that ask for a topology). For each
// PodSet whose admission has a topology assignment, the ungater expands
// the assignment into its lowest-level domains and pod counts, gives each
// gated pod a domain with room (neighbours by index together, see place),
// and patches the pod: a node selector entry per level of the assignment
// (allowed while the pod is gated), and the gate removed. Pods of a PodSet
// without an assignment wait. It is level-triggered: every pass recounts
// the pods already placed.
//
// Its pods come from an informer of its own that holds only the pods
// labelled kueue.x-k8s.io/tas=true, trimmed to what it reads: a cluster
// without topology-aware admissions costs one idle watch.
package topologyungater

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/tas"
)

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch

// Events the ungater records.
const (
	// ReasonUngated (Normal, on the Workload) counts the pods given a
	// domain in one pass.
	ReasonUngated = "TopologyUngated"
	// ReasonNoDomain (Warning, on a pod) says why a gated pod got no domain.
	ReasonNoDomain = "TopologyUngateFailed"
	// ReasonBadAssignment (Warning, on the Workload) reports a topology
	// assignment that cannot be read.
	ReasonBadAssignment = "InvalidTopologyAssignment"
)

// indexWorkload indexes the cached pods by the Workload they belong to.
const indexWorkload = "kuota.topology-ungater.workload"

// maxPodWarnings bounds the Warning events of one pass.
const maxPodWarnings = 10

// strayRetry is how soon a pass is done again after a stray pod changed
// under it.
const strayRetry = time.Second

// Reconciler ungates the pods of one Workload per request.
type Reconciler struct {
	// Client reads Workloads (the manager's cache) and patches pods.
	Client client.Client
	// Pods reads the pods labelled kueue.x-k8s.io/tas=true, indexed by
	// Workload (indexWorkload).
	Pods     client.Reader
	Recorder record.EventRecorder
}

// podCache is the ungater's informer cache, started with the manager's
// caches.
type podCache struct{ cache.Cache }

func (c podCache) GetCache() cache.Cache { return c.Cache }

// Setup creates the ungater's pod cache and registers the controller; it
// returns the pod cache, which others may read too (feed.BoundPods).
func Setup(mgr ctrl.Manager) (cache.Cache, error) {
	pods, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(),
		Mapper: mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {
			Label:     labels.SelectorFromSet(labels.Set{jobframework.TASLabel: jobframework.TASLabelValue}),
			Transform: trimPod,
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the topology ungater's pod cache: %w", err)
	}
	if err := pods.IndexField(context.Background(), &corev1.Pod{}, indexWorkload, workloadIndex); err != nil {
		return nil, fmt.Errorf("indexing pods by Workload: %w", err)
	}
	if err := mgr.Add(podCache{pods}); err != nil {
		return nil, fmt.Errorf("adding the topology ungater's pod cache: %w", err)
	}
	r := &Reconciler{Client: mgr.GetClient(), Pods: pods, Recorder: mgr.GetEventRecorderFor("kuota-topology-ungater")}
	return pods, r.SetupWithManager(mgr, pods)
}

// SetupWithManager watches the gated pods of pods and the Workloads with
// a topology assignment.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, pods cache.Cache) error {
	// A pod matters while gated, and once more when its gate goes: if the
	// assignment moved away from its domain meanwhile, it is a stray.
	gated := predicate.TypedFuncs[*corev1.Pod]{
		CreateFunc: func(e event.TypedCreateEvent[*corev1.Pod]) bool { return jobframework.HasTopologyGate(e.Object) },
		UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Pod]) bool {
			return jobframework.HasTopologyGate(e.ObjectOld) || jobframework.HasTopologyGate(e.ObjectNew)
		},
		GenericFunc: func(e event.TypedGenericEvent[*corev1.Pod]) bool { return jobframework.HasTopologyGate(e.Object) },
	}
	// A Workload matters when it gets a topology assignment (and, after a
	// restart, when it has one); its other updates (conditions, status
	// writes) change nothing for its pods, which bring their own events.
	assigned := predicate.TypedFuncs[*kueue.Workload]{
		CreateFunc: func(e event.TypedCreateEvent[*kueue.Workload]) bool { return hasAssignment(e.Object) },
		UpdateFunc: func(e event.TypedUpdateEvent[*kueue.Workload]) bool {
			return assignmentChanged(e.ObjectOld, e.ObjectNew)
		},
		GenericFunc: func(e event.TypedGenericEvent[*kueue.Workload]) bool { return hasAssignment(e.Object) },
	}
	return builder.ControllerManagedBy(mgr).
		Named("topology-ungater").
		WatchesRawSource(source.Kind(pods, &corev1.Pod{}, handler.TypedEnqueueRequestsFromMapFunc(podWorkload), gated)).
		WatchesRawSource(source.Kind(mgr.GetCache(), &kueue.Workload{}, &handler.TypedEnqueueRequestForObject[*kueue.Workload]{}, assigned)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 5}).
		Complete(r)
}

// trimPod keeps what the ungater reads of a pod: its metadata (without
// managedFields and kubectl's last-applied configuration), node selector,
// gates, node and phase. Patches are computed between two trimmed copies,
// so they only ever touch the node selector and the gates.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	p.ManagedFields = nil
	delete(p.Annotations, corev1.LastAppliedConfigAnnotation)
	p.Spec = corev1.PodSpec{NodeSelector: p.Spec.NodeSelector, SchedulingGates: p.Spec.SchedulingGates, NodeName: p.Spec.NodeName}
	p.Status = corev1.PodStatus{Phase: p.Status.Phase}
	return p, nil
}

// workloadIndex is a pod's Workload: the kueue.x-k8s.io/workload
// annotation its admission gave it.
func workloadIndex(o client.Object) []string {
	if name := o.GetAnnotations()[jobframework.WorkloadAnnotation]; name != "" {
		return []string{name}
	}
	return nil
}

func podWorkload(_ context.Context, p *corev1.Pod) []reconcile.Request {
	name := p.Annotations[jobframework.WorkloadAnnotation]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: name}}}
}

// assignmentChanged reports whether the new Workload has a topology
// assignment the old one did not have, or a different one.
func assignmentChanged(old, new *kueue.Workload) bool {
	if !hasAssignment(new) {
		return false
	}
	if old.Status.Admission == nil || len(old.Status.Admission.PodSetAssignments) != len(new.Status.Admission.PodSetAssignments) {
		return true
	}
	for i := range new.Status.Admission.PodSetAssignments {
		if !equality.Semantic.DeepEqual(old.Status.Admission.PodSetAssignments[i].TopologyAssignment,
			new.Status.Admission.PodSetAssignments[i].TopologyAssignment) {
			return true
		}
	}
	return false
}

func hasAssignment(wl *kueue.Workload) bool {
	if wl.Status.Admission == nil {
		return false
	}
	for i := range wl.Status.Admission.PodSetAssignments {
		if wl.Status.Admission.PodSetAssignments[i].TopologyAssignment != nil {
			return true
		}
	}
	return false
}

// Reconcile places the gated pods of each PodSet of the Workload that has
// a topology assignment.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := r.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if wl.Status.Admission == nil || !wl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	for i := range wl.Status.Admission.PodSetAssignments {
		psa := &wl.Status.Admission.PodSetAssignments[i]
		if psa.TopologyAssignment == nil {
			continue // its gated pods wait for an assignment
		}
		if err := r.ungatePodSet(ctx, &wl, psa); errors.Is(err, errStrayChanged) {
			return ctrl.Result{RequeueAfter: strayRetry}, nil
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// ungatePodSet places and ungates the gated pods of one PodSet.
func (r *Reconciler) ungatePodSet(ctx context.Context, wl *kueue.Workload, psa *kueue.PodSetAssignment) error {
	domains, err := tas.Domains(psa.TopologyAssignment)
	if err != nil {
		r.Recorder.Eventf(wl, corev1.EventTypeWarning, ReasonBadAssignment,
			"PodSet %s: the topology assignment cannot be read, its pods stay gated: %v", psa.Name, err)
		return nil
	}
	var list corev1.PodList
	if err := r.Pods.List(ctx, &list, client.InNamespace(wl.Namespace), client.MatchingFields{indexWorkload: wl.Name},
		client.MatchingLabels{jobframework.PodSetLabel: string(psa.Name)}); err != nil {
		return fmt.Errorf("listing the pods of PodSet %s: %w", psa.Name, err)
	}
	levels := psa.TopologyAssignment.Levels
	var strayErr error
	for _, p := range strays(levels, domains, list.Items) {
		if err := r.failStray(ctx, p, levels); err != nil && !errors.Is(err, errStrayChanged) {
			return err
		} else if err != nil {
			strayErr = err
		}
	}
	members, byName := membersOf(list.Items, indexingOf(wl, psa.Name), domains)
	if len(byName) == 0 {
		return strayErr
	}
	plan := place(levels, domains, members)
	ungated := 0
	for name, i := range plan.domain {
		done, err := r.ungate(ctx, byName[name], levels, domains[i])
		if err != nil {
			return err
		}
		if done {
			ungated++
		}
	}
	warned := 0
	for name, why := range plan.unplaced {
		if warned == maxPodWarnings {
			break
		}
		r.Recorder.Event(byName[name], corev1.EventTypeWarning, ReasonNoDomain, "Cannot lift the topology gate: "+why)
		warned++
	}
	if ungated > 0 {
		r.Recorder.Eventf(wl, corev1.EventTypeNormal, ReasonUngated, "PodSet %s: %d pods got their topology domain", psa.Name, ungated)
		observeGateRemoval(wl)
	}
	return strayErr
}

// observeGateRemoval records kueue_pod_scheduling_gate_removal_seconds for
// the topology gate: from the Workload's quota reservation to now.
func observeGateRemoval(wl *kueue.Workload) {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
	if c == nil || c.Status != metav1.ConditionTrue || wl.Status.Admission == nil {
		return
	}
	isGroup := wl.Annotations[jobframework.IsGroupWorkloadAnnotation] == "true"
	metrics.SchedulingGateRemoved(metrics.GateTopology, string(wl.Status.Admission.ClusterQueue), isGroup, time.Since(c.LastTransitionTime.Time))
}

// indexingOf reads the index labels of a PodSet's topology request.
func indexingOf(wl *kueue.Workload, name kueue.PodSetReference) indexing {
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		if ps.Name != name || ps.TopologyRequest == nil {
			continue
		}
		tr := ps.TopologyRequest
		ix := indexing{}
		if tr.PodIndexLabel != nil {
			ix.label = *tr.PodIndexLabel
		}
		if tr.SubGroupIndexLabel != nil && tr.SubGroupCount != nil {
			ix.subGroupLabel, ix.subGroupCount = *tr.SubGroupIndexLabel, *tr.SubGroupCount
		}
		return ix
	}
	return indexing{}
}

// membersOf turns the pods of a PodSet into placement members: the
// running ones and the gated ones (those ended or being deleted hold no
// place), and the gated pods by name.
func membersOf(pods []corev1.Pod, ix indexing, domains []tas.Domain) ([]member, map[string]*corev1.Pod) {
	total := 0
	for _, d := range domains {
		total += int(d.Count)
	}
	var members []member
	byName := map[string]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		if !p.DeletionTimestamp.IsZero() || jobframework.IsTerminal(p) {
			continue
		}
		gated := jobframework.HasTopologyGate(p)
		m := member{name: p.Name, gated: gated, nodeSelector: p.Spec.NodeSelector, rank: -1}
		if gated {
			byName[p.Name] = p
			offset, _ := strconv.Atoi(p.Annotations[jobframework.PodIndexOffsetAnnotation])
			m.rank = ix.rankOf(p.Labels, offset, total)
		}
		members = append(members, m)
	}
	return members, byName
}

// ungate gives a gated pod its domain's node selector and lifts the
// topology gate, in one patch guarded by the pod's resourceVersion (place
// chose a domain the pod's own node selector agrees with). A patch the API
// server refuses as invalid leaves the pod gated with a Warning event. It
// reports whether it patched.
func (r *Reconciler) ungate(ctx context.Context, p *corev1.Pod, levels []string, d tas.Domain) (bool, error) {
	orig := p.DeepCopy()
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = map[string]string{}
	}
	var pairs []string
	for l, level := range levels {
		p.Spec.NodeSelector[level] = d.Values[l]
		pairs = append(pairs, level+"="+d.Values[l])
	}
	jobframework.RemoveGate(p, jobframework.TopologyGate)
	if err := r.Client.Patch(ctx, p, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if apierrors.IsInvalid(err) {
			r.Recorder.Eventf(p, corev1.EventTypeWarning, ReasonNoDomain, "Cannot lift the topology gate with node selector %s: %v",
				strings.Join(pairs, ","), err)
			return false, nil
		}
		return false, fmt.Errorf("ungating pod %s: %w", p.Name, err)
	}
	return true, nil
}
