package workload

import (
	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// ShapeOptions tune how API PodSets become shapes.
type ShapeOptions struct {
	// ExcludedResourcePrefixes drops matching resources from requests.
	ExcludedResourcePrefixes []string
	// Transformations rewrite each pod's requests after the exclusions.
	Transformations []resources.Transformation
	// Claims, when set, returns what a pod claims through DRA, per
	// logical resource, added to its requests first.
	Claims func(spec *corev1.PodSpec) resources.Requests
}

// ShapeFromPodSets builds the shape of a Workload's PodSets.
func ShapeFromPodSets(podSets []kueue.PodSet, opts ShapeOptions) *Shape {
	out := make([]PodSetShape, len(podSets))
	for i := range podSets {
		ps := &podSets[i]
		spec := &ps.Template.Spec
		// lifecycle.CheckPodSets keeps a workload whose requests cannot be
		// counted out of the queues; here they are at resources.Max, which
		// fits no quota.
		perPod, _ := resources.PodRequests(spec)
		perPod[corev1.ResourcePods] = resources.Unit(corev1.ResourcePods)
		if opts.Claims != nil {
			perPod.Add(opts.Claims(spec))
		}
		resources.Exclude(perPod, opts.ExcludedResourcePrefixes)
		perPod = resources.Transform(perPod, opts.Transformations)
		shape := PodSetShape{
			Name:         ps.Name,
			Count:        ps.Count,
			PerPod:       perPod,
			NodeSelector: spec.NodeSelector,
			Tolerations:  spec.Tolerations,
			Topology:     ps.TopologyRequest,
		}
		if ps.MinCount != nil {
			shape.MinCount = *ps.MinCount
		}
		if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
			shape.RequiredAffinity = spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		out[i] = shape
	}
	return NewShape(out)
}
