package validation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// validatePodSets checks the PodSets of a Workload: template metadata,
// resources (no `pods`, nothing negative), at most one minCount (and none
// on an elastic Workload) and the slice fields of topology requests.
func validatePodSets(wl *kueue.Workload, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	withMinCount := -1
	for i := range wl.Spec.PodSets {
		ps := &wl.Spec.PodSets[i]
		p := path.Index(i)
		errs = append(errs, validateTemplate(&ps.Template, p.Child("template"))...)
		if ps.MinCount != nil {
			switch {
			case elastic(wl):
				errs = append(errs, field.Forbidden(p.Child("minCount"), "cannot be used by an elastic workload ("+elasticJobAnnotation+")"))
			case withMinCount >= 0:
				errs = append(errs, field.Forbidden(p.Child("minCount"),
					fmt.Sprintf("only one PodSet may set minCount, and podSets[%d] already does", withMinCount)))
			default:
				withMinCount = i
			}
		}
		if ps.TopologyRequest != nil {
			tp := p.Child("topologyRequest")
			errs = append(errs, ValidateTopologyRequest(ps.TopologyRequest, ps.Count, TopologyRequestFields{
				SliceTopology:    tp.Child("podSetSliceRequiredTopology"),
				SliceSize:        tp.Child("podSetSliceSize"),
				SliceConstraints: tp.Child("podsetSliceRequiredTopologyConstraints"),
			})...)
		}
	}
	return errs
}

// validateTemplate checks the metadata and the resources of a pod template.
func validateTemplate(t *corev1.PodTemplateSpec, path *field.Path) field.ErrorList {
	meta := path.Child("metadata")
	errs := validateLabelMap(t.Labels, meta.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(t.Annotations, meta.Child("annotations"))...)
	spec := path.Child("spec")
	for i := range t.Spec.InitContainers {
		errs = append(errs, validateRequirements(&t.Spec.InitContainers[i].Resources, spec.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range t.Spec.Containers {
		errs = append(errs, validateRequirements(&t.Spec.Containers[i].Resources, spec.Child("containers").Index(i).Child("resources"))...)
	}
	if t.Spec.Resources != nil {
		errs = append(errs, validateRequirements(t.Spec.Resources, spec.Child("resources"))...)
	}
	return append(errs, validateResourceList(t.Spec.Overhead, spec.Child("overhead"))...)
}

func validateRequirements(r *corev1.ResourceRequirements, path *field.Path) field.ErrorList {
	errs := validateResourceList(r.Requests, path.Child("requests"))
	return append(errs, validateResourceList(r.Limits, path.Child("limits"))...)
}

// validateResourceList rejects the `pods` resource, which Kuota counts
// itself (one per pod), negative amounts and amounts too large to be
// counted. What a whole PodSet adds up to is checked when the workload is
// queued (it stays pending, Misconfigured, when too large).
func validateResourceList(list corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(list) {
		p := path.Key(string(name))
		if name == corev1.ResourcePods {
			errs = append(errs, field.Forbidden(p, "the pods resource is reserved: Kuota counts one per pod and it cannot be requested"))
			continue
		}
		q := list[name]
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must not be negative"))
			continue
		}
		errs = append(errs, validateAmount(name, q, p)...)
	}
	return errs
}

// TopologyRequestFields names where the slice fields of a topology
// request come from: the Workload's own fields, or, for the job webhooks
// (jobframework), the pod template annotations they are read from.
type TopologyRequestFields struct {
	SliceTopology, SliceSize, SliceConstraints *field.Path
}

// ValidateTopologyRequest checks the slice fields of a PodSet's topology
// request: a slice size goes with a slice topology (and does not exceed the
// PodSet's count), and the multi-layer constraints replace both, each
// layer's size dividing the size of the layer around it. Errors name the
// paths of fields.
func ValidateTopologyRequest(tr *kueue.PodSetTopologyRequest, count int32, fields TopologyRequestFields) field.ErrorList {
	var errs field.ErrorList
	size := fields.SliceSize
	switch {
	case tr.PodSetSliceRequiredTopology != nil && tr.PodSetSliceSize == nil:
		errs = append(errs, field.Required(size, "must be set when "+fields.SliceTopology.String()+" is set"))
	case tr.PodSetSliceRequiredTopology == nil && tr.PodSetSliceSize != nil:
		errs = append(errs, field.Forbidden(size, "may only be set together with "+fields.SliceTopology.String()))
	case tr.PodSetSliceSize != nil && *tr.PodSetSliceSize > count:
		errs = append(errs, field.Invalid(size, *tr.PodSetSliceSize, fmt.Sprintf("must not exceed the PodSet's count (%d)", count)))
	}
	layers := tr.PodsetSliceRequiredTopologyConstraints
	if len(layers) == 0 {
		return errs
	}
	lp := fields.SliceConstraints
	if tr.PodSetSliceRequiredTopology != nil || tr.PodSetSliceSize != nil {
		errs = append(errs, field.Forbidden(lp, fmt.Sprintf("cannot be combined with %s or %s", fields.SliceTopology, fields.SliceSize)))
	}
	for i := 1; i < len(layers); i++ {
		outer, inner := layers[i-1].Size, layers[i].Size
		if inner > 0 && outer%inner != 0 {
			errs = append(errs, field.Invalid(lp.Index(i).Child("size"), inner,
				fmt.Sprintf("must divide the size of the enclosing layer (%d)", outer)))
		}
	}
	return errs
}

// validatePodSetsUnchanged forbids changing the PodSets of a Workload that
// holds a quota reservation; an elastic Workload may lower a PodSet's count.
func validatePodSetsUnchanged(oldWL, newWL *kueue.Workload, path *field.Path) field.ErrorList {
	const why = "cannot change while the workload holds a quota reservation"
	if len(oldWL.Spec.PodSets) != len(newWL.Spec.PodSets) {
		return field.ErrorList{field.Forbidden(path, "PodSets "+why)}
	}
	var errs field.ErrorList
	for i := range newWL.Spec.PodSets {
		before, after := oldWL.Spec.PodSets[i], *newWL.Spec.PodSets[i].DeepCopy()
		detail := why
		if elastic(newWL) {
			detail += "; an elastic workload may only lower count"
			if after.Count < before.Count {
				after.Count = before.Count
			}
		}
		if !semantic.DeepEqual(before, after) {
			errs = append(errs, field.Forbidden(path.Index(i), detail))
		}
	}
	return errs
}

// validateAdmissionGatesUpdate lets an update remove admission gates but
// not add any: gates are set when the Workload is created.
func validateAdmissionGatesUpdate(oldWL, newWL *kueue.Workload) field.ErrorList {
	before := admissionGates(oldWL)
	var errs field.ErrorList
	for _, g := range sortedKeys(admissionGates(newWL)) {
		if !before[g] {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(admissionGatedByAnnotation),
				fmt.Sprintf("gate %q is new: gates can only be set when the workload is created, and later only removed", g)))
		}
	}
	return errs
}

// admissionGates parses the comma-separated admission gates of a Workload.
func admissionGates(wl *kueue.Workload) map[string]bool {
	value, ok := wl.Annotations[admissionGatedByAnnotation]
	if !ok {
		return nil
	}
	out := map[string]bool{}
	for g := range strings.SplitSeq(value, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out[g] = true
		}
	}
	return out
}
