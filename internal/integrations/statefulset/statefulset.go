// Package statefulset queues StatefulSets: the replicas form one pod group
// (Workload), named after the StatefulSet as Kueue names it, admitted all
// together with one PodSet "main" of replicas pods (fast admission: the
// Workload exists from the first pod on; a serving group never finishes).
//
// The webhook marks the pod template (pod-suspending-parent, the group
// name, the managed label, queue name and priority class); DefaultPod gives
// each new pod the group's total count, the StatefulSet's replicas; the
// reconciler keeps the count of every pod in line when the StatefulSet is
// scaled. The pod integration does the rest: a group scaled down gives the
// quota of the pods it no longer has back (reclaimable pods); a group
// scaled up past its admitted size is queued again whole, at its new size.
package statefulset

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FrameworkName is the name in integrations.frameworks.
const FrameworkName = "statefulset"

// GVK is the kind this package handles.
var GVK = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// Integration registers StatefulSets.
var Integration = jobframework.Integration{
	Name:            FrameworkName,
	GVK:             GVK,
	SetupWebhook:    setupWebhook,
	SetupReconciler: setupReconciler,
	DefaultPod:      defaultPod,
	Requires:        []string{jobframework.PodFrameworkName},
}

// GroupName is the pod group (and Workload) name of a StatefulSet: Kueue's
// Workload name for the StatefulSet with no UID, so that it is known
// before the StatefulSet exists.
func GroupName(name string) string { return jobframework.WorkloadName(name, "", GVK) }

// +kubebuilder:webhook:path=/mutate-apps-v1-statefulset,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps,resources=statefulsets,verbs=create;update,versions=v1,name=mstatefulset.kb.io,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-apps-v1-statefulset,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps,resources=statefulsets,verbs=create;update,versions=v1,name=vstatefulset.kb.io,admissionReviewVersions=v1

// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch

// Webhook marks the pod template of managed StatefulSets.
type Webhook struct {
	Client  client.Reader
	Options jobframework.Options
}

func setupWebhook(mgr ctrl.Manager, opts jobframework.Options) error {
	w := &Webhook{Client: jobframework.LiveFallback{Cached: mgr.GetClient(), Live: mgr.GetAPIReader()}, Options: opts}
	return ctrl.NewWebhookManagedBy(mgr, &appsv1.StatefulSet{}).WithDefaulter(w).WithValidator(w).Complete()
}

var (
	_ admission.Defaulter[*appsv1.StatefulSet] = (*Webhook)(nil)
	_ admission.Validator[*appsv1.StatefulSet] = (*Webhook)(nil)
)

// Default marks the pod template of a managed StatefulSet. The total count
// is not put there (scaling would change the template and roll the pods):
// DefaultPod puts it on each pod.
func (w *Webhook) Default(ctx context.Context, s *appsv1.StatefulSet) error {
	managed, err := jobframework.DefaultParent(ctx, w.Client, w.Options, s)
	if err != nil || !managed {
		return err
	}
	t := &s.Spec.Template
	jobframework.MarkParentTemplate(t, s, FrameworkName)
	t.Labels[jobframework.PodGroupNameLabel] = GroupName(s.Name)
	t.Annotations[jobframework.PodGroupFastAdmissionAnnotation] = "true"
	t.Annotations[jobframework.PodGroupServingAnnotation] = "true"
	t.Annotations[jobframework.RoleHashAnnotation] = string(kueue.DefaultPodSetName)
	return nil
}

var (
	labelsPath         = field.NewPath("metadata", "labels")
	templateLabelsPath = field.NewPath("spec", "template", "metadata", "labels")
)

// ValidateCreate checks the Kuota labels.
func (w *Webhook) ValidateCreate(_ context.Context, s *appsv1.StatefulSet) (admission.Warnings, error) {
	errs := jobframework.ValidateLabels(s)
	errs = append(errs, validateTopology(nil, s)...)
	return nil, result(s, errs)
}

var templateAnnotationsPath = field.NewPath("spec", "template", "metadata", "annotations")

// validateTopology checks the template's topology annotations, on update
// only when they changed: scaling (to zero, too) is never refused for
// them.
func validateTopology(oldS, newS *appsv1.StatefulSet) field.ErrorList {
	a := jobframework.TopologyAnnotations(newS.Spec.Template.Annotations)
	if a == nil || (oldS != nil && maps.Equal(jobframework.TopologyAnnotations(oldS.Spec.Template.Annotations), a)) {
		return nil
	}
	return jobframework.ValidateTopologyAnnotations(a, replicas(newS), templateAnnotationsPath)
}

// ValidateUpdate keeps the queue name and the group name fixed: the group
// was queued under them. Replicas may change.
func (w *Webhook) ValidateUpdate(_ context.Context, oldS, newS *appsv1.StatefulSet) (admission.Warnings, error) {
	errs := jobframework.ValidateLabels(newS)
	if o, n := jobframework.QueueName(oldS), jobframework.QueueName(newS); o != n {
		errs = append(errs, field.Forbidden(labelsPath.Key(jobframework.QueueNameLabel), fmt.Sprintf("cannot change (was %q)", o)))
	}
	for _, key := range []string{jobframework.QueueNameLabel, jobframework.PodGroupNameLabel} {
		if o, n := oldS.Spec.Template.Labels[key], newS.Spec.Template.Labels[key]; o != n {
			errs = append(errs, field.Forbidden(templateLabelsPath.Key(key), fmt.Sprintf("cannot change (was %q)", o)))
		}
	}
	errs = append(errs, jobframework.ValidatePriorityClassChange(oldS, newS)...)
	errs = append(errs, validateTopology(oldS, newS)...)
	return nil, result(newS, errs)
}

// ValidateDelete allows every deletion.
func (w *Webhook) ValidateDelete(context.Context, *appsv1.StatefulSet) (admission.Warnings, error) {
	return nil, nil
}

func result(s *appsv1.StatefulSet, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(GVK.GroupKind(), s.Name, errs)
}

// defaultPod gives a new pod of a managed StatefulSet its group's total
// count: the StatefulSet's replicas, read from the API server.
func defaultPod(ctx context.Context, r client.Reader, p *corev1.Pod) (bool, error) {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil || ref.Kind != GVK.Kind {
		return true, nil // created by hand from the template: its labels decide
	}
	var s appsv1.StatefulSet
	if err := r.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: ref.Name}, &s); err != nil {
		return false, fmt.Errorf("reading the pod's StatefulSet %s: %w", ref.Name, err)
	}
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[jobframework.PodGroupTotalCountAnnotation] = strconv.Itoa(int(replicas(&s)))
	if _, ok := p.Annotations[jobframework.PodGroupPodIndexLabelAnnotation]; !ok {
		// A StatefulSet's pods carry their ordinal in this label.
		p.Annotations[jobframework.PodGroupPodIndexLabelAnnotation] = appsv1.PodIndexLabel
	}
	return true, nil
}

func replicas(s *appsv1.StatefulSet) int32 { return ptr.Deref(s.Spec.Replicas, 1) }
