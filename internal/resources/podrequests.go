package resources

import (
	"fmt"
	"maps"
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
//
// It fails when a quantity, or what the pod needs of a resource in total,
// is more than can be counted (beyond MaxAmount); the error names the
// first such resource and its container, and the result still holds every
// resource, the uncountable ones at ±Max (more than any quota). Refuse the
// pod on the error; the result is for lookups that must not fail.
func PodRequests(spec *corev1.PodSpec) (Requests, error) {
	var errs firstError
	running := Requests{}
	for i := range spec.Containers {
		running.Add(containerRequests(&spec.Containers[i], &errs))
	}
	sidecars := Requests{}
	initPhase := Requests{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		req := containerRequests(c, &errs)
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
		req, err := requirements(spec.Resources)
		errs.note(err, "pod resources")
		maps.Copy(running, req)
	}
	overhead, err := FromResourceList(spec.Overhead)
	errs.note(err, "overhead")
	running.Add(overhead)
	errs.note(running.Check(), "")
	return running, errs.err
}

// firstError keeps the first error noted.
type firstError struct{ err error }

func (f *firstError) note(err error, where string) {
	switch {
	case err == nil || f.err != nil:
	case where == "":
		f.err = err
	default:
		f.err = fmt.Errorf("%s: %w", where, err)
	}
}

func containerRequests(c *corev1.Container, errs *firstError) Requests {
	out, err := requirements(&c.Resources)
	errs.note(err, "container "+c.Name)
	return out
}

// requirements is the requests, the limits standing in for missing
// requests; it fails as FromResourceList does.
func requirements(r *corev1.ResourceRequirements) (Requests, error) {
	out, err := FromResourceList(r.Requests)
	var missing corev1.ResourceList
	for name, q := range r.Limits {
		if _, set := r.Requests[name]; !set {
			if missing == nil {
				missing = corev1.ResourceList{}
			}
			missing[name] = q
		}
	}
	fromLimits, limErr := FromResourceList(missing)
	maps.Copy(out, fromLimits)
	if err == nil {
		err = limErr
	}
	return out, err
}

// PodSetRequests returns the total requests of count pods with this spec,
// including the `pods` resource (one per pod), without the resources whose
// names start with one of excludedPrefixes. It fails as PodRequests does,
// and when a total is more than can be counted.
func PodSetRequests(spec *corev1.PodSpec, count int32, excludedPrefixes []string) (Requests, error) {
	perPod, err := PodRequests(spec)
	if err != nil {
		return nil, err
	}
	perPod[corev1.ResourcePods] = Unit(corev1.ResourcePods)
	Exclude(perPod, excludedPrefixes)
	total := perPod.Scaled(int64(count))
	return total, total.Check()
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
