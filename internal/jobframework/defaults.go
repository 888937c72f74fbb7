package jobframework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// +kubebuilder:rbac:groups="",resources=limitranges,verbs=get;list;watch
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get;list;watch

// A job's pod template is not its pods: the API server gives each pod the
// container defaults of the namespace's LimitRanges and the overhead of
// its RuntimeClass when the pod is created. The Workload is charged what
// the pods will ask for, so its PodSets get the same defaults when it is
// built (a pod template that already carries them is left as it is).

// applyPodDefaults gives the PodSets the LimitRange container defaults of
// their namespace and their RuntimeClass's pod overhead. A PodSet that
// changes gets its own copy of the template. Without a reader (or with one
// whose scheme lacks the kinds, as in unit tests) nothing is added.
func applyPodDefaults(ctx context.Context, c client.Reader, ns string, podSets []kueue.PodSet) error {
	if c == nil {
		return nil
	}
	var limits corev1.LimitRangeList
	if err := c.List(ctx, &limits, client.InNamespace(ns)); err != nil {
		if runtime.IsNotRegisteredError(err) {
			return nil
		}
		return fmt.Errorf("listing the LimitRanges of namespace %s: %w", ns, err)
	}
	for i := range podSets {
		spec := &podSets[i].Template.Spec
		overhead, err := runtimeOverhead(ctx, c, spec)
		if err != nil {
			return err
		}
		if next, changed := WithPodDefaults(spec, limits.Items, overhead); changed {
			podSets[i].Template = *podSets[i].Template.DeepCopy()
			podSets[i].Template.Spec = *next
		}
	}
	return nil
}

// runtimeOverhead is the pod overhead of the spec's RuntimeClass, when it
// names one and has none set yet.
func runtimeOverhead(ctx context.Context, c client.Reader, spec *corev1.PodSpec) (corev1.ResourceList, error) {
	if spec.RuntimeClassName == nil || *spec.RuntimeClassName == "" || spec.Overhead != nil {
		return nil, nil
	}
	var rc nodev1.RuntimeClass
	if err := c.Get(ctx, client.ObjectKey{Name: *spec.RuntimeClassName}, &rc); err != nil {
		if apierrors.IsNotFound(err) || runtime.IsNotRegisteredError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading RuntimeClass %s: %w", *spec.RuntimeClassName, err)
	}
	if rc.Overhead == nil {
		return nil, nil
	}
	return rc.Overhead.PodFixed, nil
}

// WithPodDefaults returns a copy of spec with what the API server adds to
// its pods: for each container and init container, the limits (default)
// and requests (defaultRequest) of the LimitRanges' Container items that
// it does not set, the first LimitRange to set one winning; and overhead,
// when the spec has none. It reports whether anything was added (spec
// itself is returned unchanged when not).
func WithPodDefaults(spec *corev1.PodSpec, limits []corev1.LimitRange, overhead corev1.ResourceList) (*corev1.PodSpec, bool) {
	if len(limits) == 0 && (len(overhead) == 0 || spec.Overhead != nil) {
		return spec, false
	}
	out := spec.DeepCopy()
	changed := false
	if len(overhead) > 0 && out.Overhead == nil {
		out.Overhead, changed = overhead.DeepCopy(), true
	}
	for _, cs := range [][]corev1.Container{out.InitContainers, out.Containers} {
		for i := range cs {
			for _, lr := range limits {
				for _, item := range lr.Spec.Limits {
					if item.Type == corev1.LimitTypeContainer {
						changed = fill(&cs[i].Resources.Limits, item.Default) || changed
						changed = fill(&cs[i].Resources.Requests, item.DefaultRequest) || changed
					}
				}
			}
		}
	}
	if !changed {
		return spec, false
	}
	return out, true
}

// fill sets the defaults have lacks, reporting whether it set any.
func fill(have *corev1.ResourceList, defaults corev1.ResourceList) bool {
	set := false
	for name, q := range defaults {
		if _, ok := (*have)[name]; ok {
			continue
		}
		if *have == nil {
			*have = corev1.ResourceList{}
		}
		(*have)[name], set = q.DeepCopy(), true
	}
	return set
}
