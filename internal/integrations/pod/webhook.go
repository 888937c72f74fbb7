package pod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate--v1-pod,mutating=false,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create;update,versions=v1,name=vpod.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=localqueues,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=replicasets;deployments;statefulsets,verbs=get

// Webhook gates the pods Kuota manages and checks their labels.
type Webhook struct {
	// Client reads from the cache, then the API server (LiveFallback).
	Client client.Reader
	// Live reads from the API server: the parents of pods.
	Live    client.Reader
	Options jobframework.Options
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, Live: mgr.GetAPIReader(), Options: opts}
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).WithDefaulter(w).WithValidator(w).Complete()
}

var (
	_ admission.Defaulter[*corev1.Pod] = (*Webhook)(nil)
	_ admission.Validator[*corev1.Pod] = (*Webhook)(nil)
)

// Default gates a pod Kuota manages: a MultiKueue copy in a worker, one
// its parent asked to gate (the pod-suspending-parent annotation), or, in
// a managed namespace, one with
// a queue name (the namespace's "default" LocalQueue when it names none)
// that no managed job owns.
func (w *Webhook) Default(ctx context.Context, p *corev1.Pod) error {
	if p.Labels[jobframework.MultiKueueWorkerPodLabel] == "true" && p.Labels[jobframework.PrebuiltWorkloadLabel] != "" {
		// A MultiKueue copy, completed in the manager cluster: its
		// parent is not here.
		return manage(p)
	}
	if parent := p.Annotations[jobframework.SuspendingParentAnnotation]; parent != "" {
		managed := true
		if in, ok := w.Options.EnabledIntegration(parent); ok && in.DefaultPod != nil {
			var err error
			if managed, err = in.DefaultPod(ctx, w.Live, p); err != nil {
				return err
			}
		}
		if managed {
			return manage(p)
		}
		return nil
	}
	selected, err := w.Options.NamespaceManaged(ctx, w.Client, p.Namespace)
	if err != nil || !selected {
		return err
	}
	queue := jobframework.QueueName(p)
	defaultQueue := queue == "" && jobframework.DefaultQueueExists(ctx, w.Client, p.Namespace)
	if queue == "" && !defaultQueue && !w.Options.ManageJobsWithoutQueueName {
		return nil
	}
	if owned, err := w.ownedByManagedJob(ctx, p); err != nil || owned {
		return err
	}
	if defaultQueue {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[jobframework.QueueNameLabel] = jobframework.DefaultLocalQueueName
	}
	return manage(p)
}

// manage labels, gates and holds a pod; a group's pod gets its role. A
// pod that asks for a topology-aware placement also gets the topology
// gate now: gates can only be added when a pod is created. The topology
// ungater lifts it once the pod has its domain's node selector, or the
// reconciler with the admission gate when the admission has no topology.
func manage(p *corev1.Pod) error {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[jobframework.ManagedLabel] = jobframework.ManagedLabelValue
	controllerutil.AddFinalizer(p, jobframework.PodFinalizer)
	jobframework.Gate(p)
	if jobframework.AsksForTopology(p.Annotations) && !jobframework.HasTopologyGate(p) {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: jobframework.TopologyGate})
	}
	if p.Labels[jobframework.PodGroupNameLabel] != "" && p.Annotations[jobframework.RoleHashAnnotation] == "" {
		role, err := roleHash(&p.Spec)
		if err != nil {
			return err
		}
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[jobframework.RoleHashAnnotation] = role
	}
	return nil
}

// maxOwnerDepth bounds the walk up a pod's controller owners.
const maxOwnerDepth = 8

// intermediateOwners are the built-in kinds a pod's controller chain may
// pass through on its way to a queued job: a wrapped Deployment's
// ReplicaSet, a wrapped StatefulSet, a LeaderWorkerSet's leader pod, a
// Spark driver pod.
var intermediateOwners = map[schema.GroupKind]bool{
	{Group: "apps", Kind: "ReplicaSet"}:  true,
	{Group: "apps", Kind: "Deployment"}:  true,
	{Group: "apps", Kind: "StatefulSet"}: true,
	{Group: "", Kind: "Pod"}:             true,
}

// ownedByManagedJob reports whether the pod belongs to a job Kuota
// manages, so that the pod is that job's business: a controller owner up
// the chain, walking through the kinds of enabled integrations and the
// intermediate built-in kinds (a batch/v1 Job's pods; those of a Deployment
// an AppWrapper wraps: pod, ReplicaSet, Deployment, AppWrapper), or a plain
// owner of the pod (a SparkApplication's executors are controlled by its
// driver pod and name the SparkApplication as a plain owner). The walk
// stops at an owner of another kind, or one that is gone.
func (w *Webhook) ownedByManagedJob(ctx context.Context, p *corev1.Pod) (bool, error) {
	var cur client.Object = p
	seen := map[types.UID]bool{}
	for range maxOwnerDepth {
		ref := metav1.GetControllerOfNoCopy(cur)
		if ref == nil || seen[ref.UID] {
			break
		}
		seen[ref.UID] = true
		managed, next, err := w.judgeOwner(ctx, p.Namespace, *ref)
		if err != nil || managed {
			return managed, err
		}
		if next == nil {
			break
		}
		cur = next
	}
	for _, ref := range p.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			continue
		}
		if managed, _, err := w.judgeOwner(ctx, p.Namespace, ref); err != nil || managed {
			return managed, err
		}
	}
	return false, nil
}

// judgeOwner reports whether ref is a job Kuota manages: an external
// framework's object, or a job of an enabled integration with a queue name
// (any, when jobs without one are managed). When it is not, next is the
// owner to walk on from: an enabled or intermediate kind, read from the
// API server; nil for other kinds and owners that are gone.
func (w *Webhook) judgeOwner(ctx context.Context, ns string, ref metav1.OwnerReference) (managed bool, next *metav1.PartialObjectMetadata, err error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return false, nil, nil //nolint:nilerr // not a kind Kuota knows
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
	if w.Options.IsExternal(gk) {
		// An external framework's controller holds its quota.
		return true, nil, nil
	}
	in, enabled := w.Options.EnabledKind(gk)
	if !enabled && !intermediateOwners[gk] {
		return false, nil, nil
	}
	owner, err := w.owner(ctx, ns, gv.WithKind(ref.Kind), ref.Name)
	if err != nil || owner == nil {
		return false, nil, err
	}
	if enabled && in.NewJob != nil && (jobframework.QueueName(owner) != "" || w.Options.ManageJobsWithoutQueueName) {
		return true, nil, nil
	}
	return false, owner, nil
}

// owner reads a pod's owner's metadata; nil when it is gone.
func (w *Webhook) owner(ctx context.Context, ns string, gvk schema.GroupVersionKind, name string) (*metav1.PartialObjectMetadata, error) {
	var owner metav1.PartialObjectMetadata
	owner.SetGroupVersionKind(gvk)
	if err := w.Live.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &owner); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the pod's owner %s %s: %w", gvk.Kind, name, err)
	}
	return &owner, nil
}

var (
	labelsPath      = field.NewPath("metadata", "labels")
	annotationsPath = field.NewPath("metadata", "annotations")
)

// ValidateCreate checks a new pod's Kuota labels and group metadata, and
// that a group's new pod agrees with the pods already there.
func (w *Webhook) ValidateCreate(ctx context.Context, p *corev1.Pod) (admission.Warnings, error) {
	errs := validatePod(p)
	_, parented := p.Annotations[jobframework.SuspendingParentAnnotation]
	if managed(p) && !parented {
		errs = append(errs, validateTopology(p)...)
	}
	if len(errs) == 0 && managed(p) && !parented && p.Labels[jobframework.PodGroupNameLabel] != "" {
		errs = append(errs, w.agreesWithGroup(ctx, p)...)
	}
	return nil, result(p, errs)
}

// ValidateUpdate checks a pod change: the queue name may change only while
// the pod waits, the group name never, an unretriable group stays so, and
// only an admission lifts the admission gate.
func (w *Webhook) ValidateUpdate(ctx context.Context, oldP, newP *corev1.Pod) (admission.Warnings, error) {
	errs := validatePod(newP)
	waiting := func(p *corev1.Pod) bool { return jobframework.IsGated(p) || jobframework.IsTerminal(p) }
	if managed(oldP) {
		errs = append(errs, jobframework.ValidateLabelChanges(oldP, newP, waiting(oldP), waiting(newP))...)
	}
	if g := oldP.Labels[jobframework.PodGroupNameLabel]; g != "" && newP.Labels[jobframework.PodGroupNameLabel] != g {
		errs = append(errs, field.Forbidden(labelsPath.Key(jobframework.PodGroupNameLabel), "cannot change"))
	}
	if oldP.Annotations[jobframework.RetriableInGroupAnnotation] == "false" && newP.Annotations[jobframework.RetriableInGroupAnnotation] != "false" {
		errs = append(errs, field.Forbidden(annotationsPath.Key(jobframework.RetriableInGroupAnnotation),
			"an unretriable pod group cannot become retriable"))
	}
	if managed(newP) && jobframework.IsGated(oldP) && !jobframework.IsGated(newP) {
		u := newUnit(newP.Labels[jobframework.PodGroupNameLabel] != "", newP.Labels[jobframework.PodGroupNameLabel], []corev1.Pod{*newP})
		if !u.group {
			u.name = newP.Name
		}
		key := types.NamespacedName{Namespace: newP.Namespace, Name: u.workloadName()}
		errs = append(errs, jobframework.CheckAdmitted(ctx, w.Client, key, field.NewPath("spec", "schedulingGates"),
			"the pod is queued by Kuota and may be scheduled only once its Workload %s is admitted")...)
	}
	return nil, result(newP, errs)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *corev1.Pod) (admission.Warnings, error) {
	return nil, nil
}

func managed(p *corev1.Pod) bool {
	return p.Labels[jobframework.ManagedLabel] == jobframework.ManagedLabelValue
}

func result(p *corev1.Pod, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(GVK.GroupKind(), p.Name, errs)
}

// validatePod checks the labels and annotations a pod carries: Kuota's
// labels, the managed label's value, and a group's name and total count
// (both or neither; the name a valid Workload name; the count a positive
// integer; a prebuilt Workload named as the group).
func validatePod(p *corev1.Pod) field.ErrorList {
	errs := jobframework.ValidateLabels(p)
	if v, ok := p.Labels[jobframework.ManagedLabel]; ok && v != jobframework.ManagedLabelValue {
		errs = append(errs, field.Forbidden(labelsPath.Key(jobframework.ManagedLabel), "the managed label's value can only be \"true\""))
	}
	group, hasGroup := p.Labels[jobframework.PodGroupNameLabel]
	count, hasCount := p.Annotations[jobframework.PodGroupTotalCountAnnotation]
	switch {
	case hasCount && !hasGroup:
		errs = append(errs, field.Required(labelsPath.Key(jobframework.PodGroupNameLabel),
			fmt.Sprintf("both the %s annotation and the %s label must be set", jobframework.PodGroupTotalCountAnnotation, jobframework.PodGroupNameLabel)))
	case hasGroup && !hasCount:
		errs = append(errs, field.Required(annotationsPath.Key(jobframework.PodGroupTotalCountAnnotation),
			fmt.Sprintf("both the %s annotation and the %s label must be set", jobframework.PodGroupTotalCountAnnotation, jobframework.PodGroupNameLabel)))
	}
	if hasGroup {
		for _, msg := range validation.IsDNS1123Subdomain(group) {
			errs = append(errs, field.Invalid(labelsPath.Key(jobframework.PodGroupNameLabel), group, msg))
		}
	}
	if hasCount {
		if _, err := totalCount(p); err != nil {
			errs = append(errs, field.Invalid(annotationsPath.Key(jobframework.PodGroupTotalCountAnnotation), count, "must be a positive integer"))
		}
	}
	if pb := p.Labels[jobframework.PrebuiltWorkloadLabel]; hasGroup && pb != "" && pb != group {
		errs = append(errs, field.Invalid(labelsPath.Key(jobframework.PrebuiltWorkloadLabel), pb, "must equal the pod group's name"))
	}
	return errs
}

// validateTopology checks the topology annotations of a new pod, for a
// PodSet of the group's total count (1 for a plain pod). A parent's pods
// were checked on their parent's template.
func validateTopology(p *corev1.Pod) field.ErrorList {
	a := jobframework.TopologyAnnotations(p.Annotations)
	if a == nil {
		return nil
	}
	count := int32(1)
	if p.Labels[jobframework.PodGroupNameLabel] != "" {
		n, err := totalCount(p)
		if err != nil {
			return nil // validatePod reports the count
		}
		count = n
	}
	return jobframework.ValidateTopologyAnnotations(a, count, annotationsPath)
}

// agreesWithGroup refuses a new member whose queue name or total count
// differs from the group's pods that did not fail (read from the cache,
// which holds the managed pods). The pods of a parent (a StatefulSet being
// scaled) are not checked: their parent keeps them in line.
func (w *Webhook) agreesWithGroup(ctx context.Context, p *corev1.Pod) field.ErrorList {
	var list corev1.PodList
	if err := w.Client.List(ctx, &list, client.InNamespace(p.Namespace),
		client.MatchingLabels{jobframework.PodGroupNameLabel: p.Labels[jobframework.PodGroupNameLabel], jobframework.ManagedLabel: jobframework.ManagedLabelValue}); err != nil {
		return field.ErrorList{field.InternalError(labelsPath.Key(jobframework.PodGroupNameLabel), err)}
	}
	for i := range list.Items {
		q := &list.Items[i]
		if q.Status.Phase == corev1.PodFailed || deleting(q) || q.Name == p.Name {
			continue
		}
		group := p.Labels[jobframework.PodGroupNameLabel]
		var errs field.ErrorList
		if a, b := q.Annotations[jobframework.PodGroupTotalCountAnnotation], p.Annotations[jobframework.PodGroupTotalCountAnnotation]; a != b {
			errs = append(errs, field.Invalid(annotationsPath.Key(jobframework.PodGroupTotalCountAnnotation), b,
				fmt.Sprintf("pod %s of group %s says %s; the pods of a group must agree", q.Name, group, a)))
		}
		if a, b := jobframework.QueueName(q), jobframework.QueueName(p); a != b {
			errs = append(errs, field.Invalid(labelsPath.Key(jobframework.QueueNameLabel), b,
				fmt.Sprintf("pod %s of group %s names queue %q; the pods of a group must agree", q.Name, group, a)))
		}
		return errs
	}
	return nil
}
