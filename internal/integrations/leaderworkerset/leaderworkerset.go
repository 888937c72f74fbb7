// Package leaderworkerset queues LeaderWorkerSets: each group (a leader
// and its workers) is one Workload, named as Kueue names it (after the
// LeaderWorkerSet, the group index and its UID), with two PodSets, "leader"
// (1 pod) and "worker" (size-1 pods), or one PodSet "main" of size pods
// without a leader template. The reconciler makes one Workload per
// replica and follows scaling; the webhook marks the pod templates, and
// DefaultPod ties each pod to its group's Workload (a prebuilt Workload for
// the pod integration, which gates the pods until it is admitted).
package leaderworkerset

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	lwsv1 "sigs.k8s.io/lws/api/leaderworkerset/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FrameworkName is the name in integrations.frameworks.
const FrameworkName = "leaderworkerset.x-k8s.io/leaderworkerset"

// PodSet names of a group with a leader template.
const (
	LeaderPodSet = kueue.PodSetReference("leader")
	WorkerPodSet = kueue.PodSetReference("worker")
)

// GVK is the kind this package handles.
var GVK = lwsv1.GroupVersion.WithKind("LeaderWorkerSet")

// Integration registers LeaderWorkerSets.
var Integration = jobframework.Integration{
	Name:            FrameworkName,
	GVK:             GVK,
	AddToScheme:     lwsv1.AddToScheme,
	SetupWebhook:    setupWebhook,
	SetupReconciler: setupReconciler,
	DefaultPod:      defaultPod,
	Requires:        []string{jobframework.PodFrameworkName},
}

// WorkloadName is the Workload of a group: Kueue's name for the
// LeaderWorkerSet "<name>-<index>" with its UID.
func WorkloadName(lws *lwsv1.LeaderWorkerSet, index int) string {
	return jobframework.WorkloadName(lws.Name+"-"+strconv.Itoa(index), lws.UID, GVK)
}

func size(lws *lwsv1.LeaderWorkerSet) int32 { return ptr.Deref(lws.Spec.LeaderWorkerTemplate.Size, 1) }

func replicas(lws *lwsv1.LeaderWorkerSet) int32 { return ptr.Deref(lws.Spec.Replicas, 1) }

// PodSets describes one group: a leader PodSet of 1 and a worker PodSet of
// size-1 (dropped when size is 1), or "main" of size pods without a
// leader template.
func PodSets(lws *lwsv1.LeaderWorkerSet) []kueue.PodSet {
	t := &lws.Spec.LeaderWorkerTemplate
	if t.LeaderTemplate == nil {
		return []kueue.PodSet{{Name: kueue.DefaultPodSetName, Count: size(lws), Template: podSetTemplate(&t.WorkerTemplate)}}
	}
	sets := []kueue.PodSet{{Name: LeaderPodSet, Count: 1, Template: podSetTemplate(t.LeaderTemplate)}}
	if n := size(lws) - 1; n > 0 {
		sets = append(sets, kueue.PodSet{Name: WorkerPodSet, Count: n, Template: podSetTemplate(&t.WorkerTemplate)})
	}
	return sets
}

// podSetTemplate is a PodSet's template: the pod spec, and the annotations
// that ask for a topology-aware placement.
func podSetTemplate(t *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: jobframework.TopologyAnnotations(t.Annotations)},
		Spec: *t.Spec.DeepCopy()}
}

// podIndex: every pod of a group carries its index in the group (the
// leader 0) in the worker-index label; a worker PodSet's pods start at 1
// (the pod-index-offset annotation defaultPod puts on them).
func podIndex(*kueue.PodSet) jobframework.PodIndex {
	return jobframework.PodIndex{Label: lwsv1.WorkerIndexLabelKey}
}

// templatePaths are the leader's and the workers' templates, for errors.
var (
	leaderTemplatePath = field.NewPath("spec", "leaderWorkerTemplate", "leaderTemplate")
	workerTemplatePath = field.NewPath("spec", "leaderWorkerTemplate", "workerTemplate")
)

// validateTopology checks the topology annotations of the templates whose
// annotations are new.
func validateTopology(oldL, newL *lwsv1.LeaderWorkerSet) field.ErrorList {
	var errs field.ErrorList
	for _, ps := range PodSets(newL) {
		path := workerTemplatePath
		if ps.Name == LeaderPodSet {
			path = leaderTemplatePath
		}
		if oldL != nil && sameTopology(oldL, ps) {
			continue
		}
		if ps.Template.Annotations != nil {
			errs = append(errs, jobframework.ValidateTopologyAnnotations(ps.Template.Annotations, ps.Count, path.Child("metadata", "annotations"))...)
		}
	}
	return errs
}

// sameTopology reports whether old has the PodSet with the same count and
// topology annotations.
func sameTopology(old *lwsv1.LeaderWorkerSet, ps kueue.PodSet) bool {
	for _, o := range PodSets(old) {
		if o.Name == ps.Name {
			return o.Count == ps.Count && maps.Equal(o.Template.Annotations, ps.Template.Annotations)
		}
	}
	return false
}

// +kubebuilder:webhook:path=/mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset,mutating=true,failurePolicy=fail,sideEffects=None,groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=create;update,versions=v1,name=mleaderworkerset.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-leaderworkerset-x-k8s-io-v1-leaderworkerset,mutating=false,failurePolicy=fail,sideEffects=None,groups=leaderworkerset.x-k8s.io,resources=leaderworkersets,verbs=create;update,versions=v1,name=vleaderworkerset.kb.io,admissionReviewVersions=v1

// Webhook marks the pod templates of managed LeaderWorkerSets.
type Webhook struct {
	Client  client.Reader
	Options jobframework.Options
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, Options: opts}
	return ctrl.NewWebhookManagedBy(mgr, &lwsv1.LeaderWorkerSet{}).WithDefaulter(w).WithValidator(w).Complete()
}

var (
	_ admission.Defaulter[*lwsv1.LeaderWorkerSet] = (*Webhook)(nil)
	_ admission.Validator[*lwsv1.LeaderWorkerSet] = (*Webhook)(nil)
)

// Default marks the leader and worker templates of a managed
// LeaderWorkerSet: its pods are gated, and serve (they never finish).
func (w *Webhook) Default(ctx context.Context, lws *lwsv1.LeaderWorkerSet) error {
	managed, err := jobframework.DefaultParent(ctx, w.Client, w.Options, lws)
	if err != nil || !managed {
		return err
	}
	t := &lws.Spec.LeaderWorkerTemplate
	for _, pt := range []*corev1.PodTemplateSpec{t.LeaderTemplate, &t.WorkerTemplate} {
		if pt == nil {
			continue
		}
		jobframework.MarkParentTemplate(pt, lws, FrameworkName)
		pt.Annotations[jobframework.PodGroupServingAnnotation] = "true"
	}
	return nil
}

var labelsPath = field.NewPath("metadata", "labels")

// ValidateCreate checks the Kuota labels.
func (w *Webhook) ValidateCreate(_ context.Context, lws *lwsv1.LeaderWorkerSet) (admission.Warnings, error) {
	errs := jobframework.ValidateLabels(lws)
	errs = append(errs, validateTopology(nil, lws)...)
	return nil, result(lws, errs)
}

// ValidateUpdate keeps the queue name fixed and the priority class.
func (w *Webhook) ValidateUpdate(_ context.Context, oldL, newL *lwsv1.LeaderWorkerSet) (admission.Warnings, error) {
	errs := jobframework.ValidateLabels(newL)
	if o, n := jobframework.QueueName(oldL), jobframework.QueueName(newL); o != n {
		errs = append(errs, field.Forbidden(labelsPath.Key(jobframework.QueueNameLabel), fmt.Sprintf("cannot change (was %q)", o)))
	}
	errs = append(errs, jobframework.ValidatePriorityClassChange(oldL, newL)...)
	errs = append(errs, validateTopology(oldL, newL)...)
	return nil, result(newL, errs)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *lwsv1.LeaderWorkerSet) (admission.Warnings, error) {
	return nil, nil
}

func result(lws *lwsv1.LeaderWorkerSet, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(GVK.GroupKind(), lws.Name, errs)
}

// defaultPod ties a new pod of a managed LeaderWorkerSet to its group: the
// group's Workload (prebuilt by the reconciler), its size, its role
// (leader, worker or main), the queue and priority class.
func defaultPod(ctx context.Context, r client.Reader, p *corev1.Pod) (bool, error) {
	name := p.Labels[lwsv1.SetNameLabelKey]
	if name == "" {
		return false, fmt.Errorf("pod %s has no %s label", p.Name, lwsv1.SetNameLabelKey)
	}
	var lws lwsv1.LeaderWorkerSet
	if err := r.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: name}, &lws); err != nil {
		return false, fmt.Errorf("reading the pod's LeaderWorkerSet %s: %w", name, err)
	}
	index, err := groupIndex(p)
	if err != nil {
		return false, err
	}
	wl := WorkloadName(&lws, index)
	p.Labels[jobframework.PodGroupNameLabel] = wl
	p.Labels[jobframework.PrebuiltWorkloadLabel] = wl
	if q := jobframework.QueueName(&lws); q != "" {
		p.Labels[jobframework.QueueNameLabel] = q
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[jobframework.PodGroupTotalCountAnnotation] = strconv.Itoa(int(size(&lws)))
	role := kueue.DefaultPodSetName
	if lws.Spec.LeaderWorkerTemplate.LeaderTemplate != nil {
		role = LeaderPodSet
		if _, worker := p.Annotations[lwsv1.LeaderPodNameAnnotationKey]; worker {
			role = WorkerPodSet
		}
	}
	p.Annotations[jobframework.RoleHashAnnotation] = string(role)
	if role == WorkerPodSet {
		// The workers' worker-index labels start at 1 (the leader is 0).
		p.Annotations[jobframework.PodIndexOffsetAnnotation] = "1"
	}
	return true, nil
}

// groupIndex reads a pod's group: its group-index label, or, on a leader
// (which gets the label from the LeaderWorkerSet's own webhook, maybe
// after this one), the ordinal of its name in the leader StatefulSet.
func groupIndex(p *corev1.Pod) (int, error) {
	v := p.Labels[lwsv1.GroupIndexLabelKey]
	if v == "" {
		if _, worker := p.Annotations[lwsv1.LeaderPodNameAnnotationKey]; !worker {
			if i := strings.LastIndexByte(p.Name, '-'); i >= 0 {
				v = p.Name[i+1:]
			}
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("pod %s: cannot tell its LeaderWorkerSet group (label %s)", p.Name, lwsv1.GroupIndexLabelKey)
	}
	return n, nil
}
