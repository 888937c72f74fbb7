package jobframework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultParent is the defaulting step shared by the parents whose pods
// the pod integration gates (Deployments, StatefulSets, LeaderWorkerSets):
// in a managed namespace, an object without a queue name is sent to the
// namespace's "default" LocalQueue when there is one. It reports whether
// the object is managed (it names a queue, or jobs without one are
// managed). An object a queued kind controls (a Deployment an AppWrapper
// wraps) is left alone: its parent's Workload holds its quota.
func DefaultParent(ctx context.Context, c client.Reader, opts Options, obj client.Object) (bool, error) {
	if opts.ControlledByQueuedKind(obj) {
		return false, nil
	}
	selected, err := opts.NamespaceManaged(ctx, c, obj.GetNamespace())
	if err != nil || !selected {
		return false, err
	}
	if QueueName(obj) == "" && DefaultQueueExists(ctx, c, obj.GetNamespace()) {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[QueueNameLabel] = DefaultLocalQueueName
		obj.SetLabels(labels)
	}
	return QueueName(obj) != "" || opts.ManageJobsWithoutQueueName, nil
}

// MarkParentTemplate marks the pod template of a managed parent: its pods
// are to be gated (pod-suspending-parent names the framework), managed,
// and carry the parent's queue name and priority class.
func MarkParentTemplate(t *corev1.PodTemplateSpec, parent client.Object, framework string) {
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[SuspendingParentAnnotation] = framework
	if t.Labels == nil {
		t.Labels = map[string]string{}
	}
	t.Labels[ManagedLabel] = ManagedLabelValue
	if q := QueueName(parent); q != "" {
		t.Labels[QueueNameLabel] = q
	}
	if pc := parent.GetLabels()[PriorityClassLabel]; pc != "" {
		t.Labels[PriorityClassLabel] = pc
	}
}

// ValidatePriorityClassChange forbids removing the priority class label.
func ValidatePriorityClassChange(oldObj, newObj client.Object) field.ErrorList {
	oldPC, had := oldObj.GetLabels()[PriorityClassLabel]
	if _, has := newObj.GetLabels()[PriorityClassLabel]; had && !has {
		return field.ErrorList{field.Forbidden(labelsPath.Key(PriorityClassLabel), fmt.Sprintf("cannot be removed (was %q)", oldPC))}
	}
	return nil
}
