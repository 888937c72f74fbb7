package resources

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// PodRequests returns the effective requests of one pod with this spec, as
// the kube-scheduler computes them:
//   - a container's request defaults to its limit when only the limit is set;
//   - regular containers and sidecars (init containers with restartPolicy
//     Always) run together, so their requests add up;
//   - each regular init container runs alone with the sidecars started
//     before it, so the pod needs at least that much at that point;
//   - the pod needs the larger of the two phases, plus its overhead;
//   - pod-level requests (spec.resources), where set, replace the
//     container-derived amount of that resource.
//
// The result does not include the `pods` resource; see PodSetRequests.
func PodRequests(spec *corev1.PodSpec) Requests {
	running := Requests{}
	for i := range spec.Containers {
		running.Add(containerRequests(&spec.Containers[i]))
	}
	sidecars := Requests{}
	initPhase := Requests{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		req := containerRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			running.Add(req)
			sidecars.Add(req)
			initPhase.Max(sidecars)
			continue
		}
		atStart := sidecars.Clone()
		atStart.Add(req)
		initPhase.Max(atStart)
	}
	running.Max(initPhase)
	if spec.Resources != nil {
		for name, q := range spec.Resources.Requests {
			running[name] = FromQuantity(q)
		}
		for name, q := range spec.Resources.Limits {
			if _, set := spec.Resources.Requests[name]; !set {
				running[name] = FromQuantity(q)
			}
		}
	}
	running.Add(FromResourceList(spec.Overhead))
	return running
}

func containerRequests(c *corev1.Container) Requests {
	out := FromResourceList(c.Resources.Requests)
	for name, q := range c.Resources.Limits {
		if _, set := out[name]; !set {
			out[name] = FromQuantity(q)
		}
	}
	return out
}

// PodSetRequests returns the total requests of count pods with this spec,
// including the `pods` resource (one per pod), without the resources whose
// names start with one of excludedPrefixes.
func PodSetRequests(spec *corev1.PodSpec, count int32, excludedPrefixes []string) Requests {
	perPod := PodRequests(spec)
	perPod[corev1.ResourcePods] = One
	Exclude(perPod, excludedPrefixes)
	return perPod.Scaled(int64(count))
}

// Exclude drops, in place, the resources whose names start with a prefix.
func Exclude(r Requests, prefixes []string) {
	if len(prefixes) == 0 {
		return
	}
	for name := range r {
		for _, p := range prefixes {
			if strings.HasPrefix(string(name), p) {
				delete(r, name)
				break
			}
		}
	}
}
