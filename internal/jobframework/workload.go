package jobframework

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/provisioning"
)

// NewWorkload builds the Workload that represents a job: named after it,
// owned by it, held by the resource-in-use finalizer until the job's pods
// are gone, with its PodSets, queue, priority and maximum execution time.
// Reading priority classes needs c.
func NewWorkload(ctx context.Context, c client.Reader, job Job, gvk schema.GroupVersionKind, opts Options) (*kueue.Workload, error) {
	obj := job.Object()
	podSets, err := job.PodSets()
	if err != nil {
		return nil, fmt.Errorf("describing the job's pods: %w", err)
	}
	wl, err := BuildWorkload(ctx, c, obj, WorkloadName(obj.GetName(), obj.GetUID(), gvk), podSets, podIndexOf(job), opts)
	if err != nil {
		return nil, err
	}
	wl.Labels[JobUIDLabel] = string(obj.GetUID())
	wl.Annotations[JobOwnerGVKAnnotation] = gvk.String()
	wl.Annotations[JobOwnerNameAnnotation] = obj.GetName()
	wl.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	return wl, nil
}

// BuildWorkload builds a Workload named name for obj (whose labels give the
// queue, the priority class and the maximum execution time) and its
// PodSets, held by the resource-in-use finalizer. A PodSet without a
// topology request gets the one its template's annotations ask for, with
// the index labels index gives (nil: none). The caller adds owners and
// the annotations that tie it to its job.
func BuildWorkload(ctx context.Context, c client.Reader, obj client.Object, name string, podSets []kueue.PodSet,
	index PodIndexFunc, opts Options) (*kueue.Workload, error) {
	if err := setTopologyRequests(podSets, index); err != nil {
		return nil, err
	}
	if err := applyPodDefaults(ctx, c, obj.GetNamespace(), podSets); err != nil {
		return nil, err
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   obj.GetNamespace(),
			Finalizers:  []string{kueue.ResourceInUseFinalizerName},
			Labels:      map[string]string{},
			Annotations: copiedAnnotations(obj),
		},
		Spec: kueue.WorkloadSpec{
			PodSets:   podSets,
			QueueName: kueue.LocalQueueName(QueueName(obj)),
		},
	}
	for _, key := range opts.LabelKeysToCopy {
		if v, ok := obj.GetLabels()[key]; ok {
			wl.Labels[key] = v
		}
	}
	if v, ok := obj.GetLabels()[MaxExecTimeSecondsLabel]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("label %s: %q is not a positive number of seconds", MaxExecTimeSecondsLabel, v)
		}
		wl.Spec.MaximumExecutionTimeSeconds = ptr.To(int32(n))
	}
	ref, priority, err := priorityOf(ctx, c, obj, podSets)
	if err != nil {
		return nil, err
	}
	wl.Spec.PriorityClassRef, wl.Spec.Priority = ref, priority
	return wl, nil
}

// copiedAnnotations copies the job's annotations its Workload carries: the
// admission gates (kueue.AdmissionGatedByAnnotation), and those the
// ProvisioningRequest admission check passes to cluster-autoscaler as
// parameters (provisioning.ParameterAnnotationPrefix), and the elastic-job
// opt-in (kueue.ElasticJobAnnotation); an empty map when it has none.
func copiedAnnotations(obj client.Object) map[string]string {
	out := map[string]string{}
	for k, v := range obj.GetAnnotations() {
		if strings.HasPrefix(k, provisioning.ParameterAnnotationPrefix) || k == kueue.AdmissionGatedByAnnotation ||
			k == kueue.ElasticJobAnnotation && v == "true" {
			out[k] = v
		}
	}
	return out
}

// priorityOf resolves the job's priority: the WorkloadPriorityClass its
// label names, else the pods' PriorityClass, else none.
func priorityOf(ctx context.Context, c client.Reader, obj client.Object, podSets []kueue.PodSet) (*kueue.PriorityClassRef, *int32, error) {
	if name := obj.GetLabels()[PriorityClassLabel]; name != "" {
		var wpc kueue.WorkloadPriorityClass
		if err := c.Get(ctx, types.NamespacedName{Name: name}, &wpc); err != nil {
			return nil, nil, fmt.Errorf("label %s: WorkloadPriorityClass %q: %w", PriorityClassLabel, name, err)
		}
		return &kueue.PriorityClassRef{Group: kueue.WorkloadPriorityClassGroup, Kind: kueue.WorkloadPriorityClassKind, Name: name},
			ptr.To(wpc.Value), nil
	}
	for _, ps := range podSets {
		name := ps.Template.Spec.PriorityClassName
		if name == "" {
			continue
		}
		var pc schedulingv1.PriorityClass
		if err := c.Get(ctx, types.NamespacedName{Name: name}, &pc); err != nil {
			return nil, nil, fmt.Errorf("spec.template.spec.priorityClassName: PriorityClass %q: %w", name, err)
		}
		return &kueue.PriorityClassRef{Group: kueue.PodPriorityClassGroup, Kind: kueue.PodPriorityClassKind, Name: name},
			ptr.To(pc.Value), nil
	}
	return nil, nil, nil
}

// EquivalentPodSets reports whether a Workload's PodSets still describe the
// job: same names, counts, minimum counts, topology requests and pod specs.
func EquivalentPodSets(want, have []kueue.PodSet) bool {
	if len(want) != len(have) {
		return false
	}
	for i := range want {
		w, h := &want[i], &have[i]
		if w.Name != h.Name || w.Count != h.Count || !equality.Semantic.DeepEqual(w.MinCount, h.MinCount) ||
			!equality.Semantic.DeepEqual(w.TopologyRequest, h.TopologyRequest) ||
			!equality.Semantic.DeepEqual(resourcesOf(&w.Template.Spec), resourcesOf(&h.Template.Spec)) ||
			!equality.Semantic.DeepEqual(w.Template.Spec.NodeSelector, h.Template.Spec.NodeSelector) {
			return false
		}
	}
	return true
}

// resourcesOf lists the requests and limits of every container of a pod.
func resourcesOf(spec *corev1.PodSpec) []corev1.ResourceRequirements {
	var out []corev1.ResourceRequirements
	for _, c := range spec.InitContainers {
		out = append(out, c.Resources)
	}
	for _, c := range spec.Containers {
		out = append(out, c.Resources)
	}
	return out
}
