package jobframework

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	kvalidation "github.com/kuota-dev/kuota/internal/validation"
)

// Topology-aware scheduling (TAS): the pod template annotations a user
// asks for a placement with, and what Kuota puts on the pods of a
// topology-aware admission (Kueue's keys).
const (
	// PodSetRequiredTopologyAnnotation names a topology level (a node
	// label) one domain of which must hold all the PodSet's pods.
	PodSetRequiredTopologyAnnotation = "kueue.x-k8s.io/podset-required-topology"
	// PodSetPreferredTopologyAnnotation names a level one domain of which
	// should hold the pods; wider levels are tried when they do not fit.
	PodSetPreferredTopologyAnnotation = "kueue.x-k8s.io/podset-preferred-topology"
	// PodSetUnconstrainedTopologyAnnotation ("true") counts the pods
	// against the topology's capacity without keeping them together.
	PodSetUnconstrainedTopologyAnnotation = "kueue.x-k8s.io/podset-unconstrained-topology"
	// PodSetSliceRequiredTopologyAnnotation names the level each slice of
	// PodSetSliceSizeAnnotation pods must fit in.
	PodSetSliceRequiredTopologyAnnotation = "kueue.x-k8s.io/podset-slice-required-topology"
	// PodSetSliceSizeAnnotation is the number of pods of a slice.
	PodSetSliceSizeAnnotation = "kueue.x-k8s.io/podset-slice-size"
	// PodSetSliceRequiredTopologyConstraintsAnnotation gives several slice
	// layers as a JSON array of {"topology": level, "size": pods},
	// outermost first.
	PodSetSliceRequiredTopologyConstraintsAnnotation = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
	// PodSetGroupNameAnnotation groups PodSets (a leader and its workers)
	// that share a flavor and a topology domain.
	PodSetGroupNameAnnotation = "kueue.x-k8s.io/podset-group-name"

	// PodGroupPodIndexLabelAnnotation, on the pods of a pod group, names
	// the label that holds each pod's index in the group.
	PodGroupPodIndexLabelAnnotation = "kueue.x-k8s.io/pod-group-pod-index-label"
	// PodIndexOffsetAnnotation, on a pod template, is the index of the
	// first pod of its PodSet (a LeaderWorkerSet's workers start at 1).
	PodIndexOffsetAnnotation = "kueue.x-k8s.io/pod-index-offset"

	// TopologyGate holds the pods of a topology-aware admission until the
	// topology ungater has given each one the node selector of its domain.
	TopologyGate = "kueue.x-k8s.io/topology"
	// TASLabel ("true") marks the pods of a topology-aware admission; the
	// topology ungater's pod informer selects on it.
	TASLabel      = "kueue.x-k8s.io/tas"
	TASLabelValue = "true"

	// maxSliceLayers is the most layers of slice constraints.
	maxSliceLayers = 3
	// maxLevelLength and maxGroupNameLength are the Workload schema's
	// bounds on a level name and a PodSet group name.
	maxLevelLength     = 63
	maxGroupNameLength = 256
)

// PodIndex says which pod labels carry a pod's position in its PodSet:
// its index and, for a PodSet made of several replicated jobs, the index
// of its job among SubGroupCount. The topology ungater places pods of
// neighbouring positions in the same domain.
type PodIndex struct {
	Label         string
	SubGroupLabel string
	SubGroupCount *int32
}

// PodIndexFunc gives the PodIndex of a PodSet's pods; nil means none.
type PodIndexFunc func(ps *kueue.PodSet) PodIndex

// JobWithPodIndex is a Job whose pods carry their index in a label (a
// batch/v1 Job's completion index, a Kubeflow replica index).
type JobWithPodIndex interface {
	Job
	// PodIndex gives the index labels of the pods of one of the job's
	// PodSets.
	PodIndex(ps *kueue.PodSet) PodIndex
}

// podIndexOf is the PodIndexFunc of a job, nil when its pods carry no
// index.
func podIndexOf(job Job) PodIndexFunc {
	if j, ok := job.(JobWithPodIndex); ok {
		return j.PodIndex
	}
	return nil
}

// TopologyRequestKeys are the annotations a topology request is read
// from; any one of them makes a PodSet topology-aware.
var TopologyRequestKeys = []string{
	PodSetRequiredTopologyAnnotation, PodSetPreferredTopologyAnnotation, PodSetUnconstrainedTopologyAnnotation,
	PodSetSliceRequiredTopologyAnnotation, PodSetSliceSizeAnnotation, PodSetSliceRequiredTopologyConstraintsAnnotation,
	PodSetGroupNameAnnotation,
}

// AsksForTopology reports whether annotations ask for a topology-aware
// placement: a required, preferred or unconstrained ("true") topology,
// or slices. The pod webhook gates such pods with TopologyGate.
func AsksForTopology(annotations map[string]string) bool {
	for _, k := range []string{PodSetRequiredTopologyAnnotation, PodSetPreferredTopologyAnnotation,
		PodSetSliceRequiredTopologyAnnotation, PodSetSliceRequiredTopologyConstraintsAnnotation} {
		if _, ok := annotations[k]; ok {
			return true
		}
	}
	v, err := strconv.ParseBool(annotations[PodSetUnconstrainedTopologyAnnotation])
	return err == nil && v
}

// TopologyAnnotations returns the topology request annotations of m (nil
// when there are none), for the kinds whose PodSet templates are built
// from pods or templates without their metadata.
func TopologyAnnotations(m map[string]string) map[string]string {
	var out map[string]string
	for _, k := range TopologyRequestKeys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// TopologyRequest reads a PodSet's topology request from its pod
// template's annotations, with the index labels of its pods. It returns
// nil when no annotation asks for a topology (index labels alone make no
// request; nor does an unconstrained topology of "false"). A value that
// cannot be read is an error naming its annotation.
func TopologyRequest(annotations map[string]string, index PodIndex) (*kueue.PodSetTopologyRequest, error) {
	tr := &kueue.PodSetTopologyRequest{}
	set := false
	str := func(key string, dst **string) {
		if v, ok := annotations[key]; ok {
			*dst, set = ptr.To(v), true
		}
	}
	str(PodSetRequiredTopologyAnnotation, &tr.Required)
	str(PodSetPreferredTopologyAnnotation, &tr.Preferred)
	str(PodSetSliceRequiredTopologyAnnotation, &tr.PodSetSliceRequiredTopology)
	str(PodSetGroupNameAnnotation, &tr.PodSetGroupName)
	if v, ok := annotations[PodSetUnconstrainedTopologyAnnotation]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %q is not a boolean", PodSetUnconstrainedTopologyAnnotation, v)
		}
		if b {
			tr.Unconstrained, set = ptr.To(true), true
		}
	}
	if v, ok := annotations[PodSetSliceSizeAnnotation]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %q is not an integer", PodSetSliceSizeAnnotation, v)
		}
		tr.PodSetSliceSize, set = ptr.To(int32(n)), true
	}
	if v, ok := annotations[PodSetSliceRequiredTopologyConstraintsAnnotation]; ok {
		layers, err := parseSliceLayers(v)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", PodSetSliceRequiredTopologyConstraintsAnnotation, err)
		}
		tr.PodsetSliceRequiredTopologyConstraints, set = layers, true
	}
	if !set {
		return nil, nil
	}
	if index.Label != "" {
		tr.PodIndexLabel = ptr.To(index.Label)
	}
	if index.SubGroupLabel != "" {
		tr.SubGroupIndexLabel = ptr.To(index.SubGroupLabel)
		tr.SubGroupCount = index.SubGroupCount
	}
	return tr, nil
}

// parseSliceLayers reads the JSON array of slice layers.
func parseSliceLayers(v string) ([]kueue.PodsetSliceRequiredTopologyConstraint, error) {
	var layers []kueue.PodsetSliceRequiredTopologyConstraint
	if err := json.Unmarshal([]byte(v), &layers); err != nil {
		return nil, fmt.Errorf(`not a JSON array of {"topology": level, "size": pods}: %w`, err)
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("the array of slice layers is empty")
	}
	return layers, nil
}

// setTopologyRequests gives each PodSet without a topology request the one
// its template's annotations ask for.
func setTopologyRequests(podSets []kueue.PodSet, index PodIndexFunc) error {
	for i := range podSets {
		ps := &podSets[i]
		if ps.TopologyRequest != nil {
			continue
		}
		var ix PodIndex
		if index != nil {
			ix = index(ps)
		}
		tr, err := TopologyRequest(ps.Template.Annotations, ix)
		if err != nil {
			return fmt.Errorf("podset %s: %w", ps.Name, err)
		}
		ps.TopologyRequest = tr
	}
	return nil
}

// ValidateTopologyAnnotations checks the topology annotations of one
// PodSet's pod template, of count pods; path is the template's
// metadata.annotations, and each error names the annotation at fault.
// Required, preferred and unconstrained exclude each other; levels are
// label keys; the slice size is a positive integer no larger than the
// PodSet and goes with a slice topology; the multi-layer constraints are
// JSON, at most three layers, each dividing the one around it, instead of
// the single-layer slice annotations. The slice rules are the Workload's
// own (internal/validation).
func ValidateTopologyAnnotations(annotations map[string]string, count int32, path *field.Path) field.ErrorList {
	errs := validateTopologyModes(annotations, path)
	for _, key := range []string{PodSetRequiredTopologyAnnotation, PodSetPreferredTopologyAnnotation, PodSetSliceRequiredTopologyAnnotation} {
		if v, ok := annotations[key]; ok {
			errs = append(errs, validateLevel(v, path.Key(key))...)
		}
	}
	if v, ok := annotations[PodSetGroupNameAnnotation]; ok {
		if v == "" {
			errs = append(errs, field.Invalid(path.Key(PodSetGroupNameAnnotation), v, "must not be empty"))
		} else if len(v) > maxGroupNameLength {
			errs = append(errs, field.TooLong(path.Key(PodSetGroupNameAnnotation), v, maxGroupNameLength))
		}
	}
	// tr has what the slice rules look at; a value that does not parse
	// counts as present (its own error is reported here) with a size that
	// trips no other rule.
	tr := &kueue.PodSetTopologyRequest{}
	if v, ok := annotations[PodSetSliceRequiredTopologyAnnotation]; ok {
		tr.PodSetSliceRequiredTopology = ptr.To(v)
	}
	if v, ok := annotations[PodSetSliceSizeAnnotation]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 {
			errs = append(errs, field.Invalid(path.Key(PodSetSliceSizeAnnotation), v, "must be a positive integer"))
			n = 0
		}
		tr.PodSetSliceSize = ptr.To(int32(n))
	}
	if v, ok := annotations[PodSetSliceRequiredTopologyConstraintsAnnotation]; ok {
		var layerErrs field.ErrorList
		tr.PodsetSliceRequiredTopologyConstraints, layerErrs = validateSliceLayers(v, path.Key(PodSetSliceRequiredTopologyConstraintsAnnotation))
		errs = append(errs, layerErrs...)
	}
	return append(errs, kvalidation.ValidateTopologyRequest(tr, count, kvalidation.TopologyRequestFields{
		SliceTopology:    path.Key(PodSetSliceRequiredTopologyAnnotation),
		SliceSize:        path.Key(PodSetSliceSizeAnnotation),
		SliceConstraints: path.Key(PodSetSliceRequiredTopologyConstraintsAnnotation),
	})...)
}

// validateTopologyModes lets at most one of required, preferred and
// unconstrained be set, and unconstrained only to a boolean.
func validateTopologyModes(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	var modes []string
	for _, key := range []string{PodSetRequiredTopologyAnnotation, PodSetPreferredTopologyAnnotation} {
		if _, ok := annotations[key]; ok {
			modes = append(modes, key)
		}
	}
	if v, ok := annotations[PodSetUnconstrainedTopologyAnnotation]; ok {
		b, err := strconv.ParseBool(v)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(path.Key(PodSetUnconstrainedTopologyAnnotation), v, `must be "true" or "false"`))
		case b:
			modes = append(modes, PodSetUnconstrainedTopologyAnnotation)
		}
	}
	for _, key := range slices.Sorted(slices.Values(modes[min(1, len(modes)):])) {
		errs = append(errs, field.Forbidden(path.Key(key),
			fmt.Sprintf("cannot be combined with %s: set one of the required, preferred or unconstrained topology annotations", modes[0])))
	}
	return errs
}

// validateLevel checks a level name: a node label key the Workload's
// topology request can hold.
func validateLevel(v string, path *field.Path) field.ErrorList {
	if len(v) > maxLevelLength {
		return field.ErrorList{field.TooLong(path, v, maxLevelLength)}
	}
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(v) {
		errs = append(errs, field.Invalid(path, v, "must be a node label key: "+msg))
	}
	return errs
}

// validateSliceLayers reads and checks the multi-layer slice annotation.
// It returns the layers to check further (one placeholder layer when the
// value is not readable).
func validateSliceLayers(v string, path *field.Path) ([]kueue.PodsetSliceRequiredTopologyConstraint, field.ErrorList) {
	layers, err := parseSliceLayers(v)
	if err != nil {
		return []kueue.PodsetSliceRequiredTopologyConstraint{{}}, field.ErrorList{field.Invalid(path, v, err.Error())}
	}
	var errs field.ErrorList
	if len(layers) > maxSliceLayers {
		errs = append(errs, field.TooMany(path, len(layers), maxSliceLayers))
	}
	for i, l := range layers {
		if l.Topology == "" {
			errs = append(errs, field.Required(path.Index(i).Child("topology"), "names the level of the layer"))
		} else {
			errs = append(errs, validateLevel(l.Topology, path.Index(i).Child("topology"))...)
		}
		if l.Size < 1 {
			errs = append(errs, field.Invalid(path.Index(i).Child("size"), l.Size, "must be a positive number of pods"))
		}
	}
	return layers, errs
}

// validateTopology checks the topology annotations of a job's pod
// templates. On update (old set), a PodSet whose annotations and count
// did not change is not checked again. A job whose PodSets cannot be read
// is left to the kind's own checks.
func validateTopology(old, job Job) field.ErrorList {
	podSets, err := job.PodSets()
	if err != nil {
		return nil
	}
	before := map[kueue.PodSetReference]*kueue.PodSet{}
	if old != nil {
		if ps, err := old.PodSets(); err == nil {
			for i := range ps {
				before[ps[i].Name] = &ps[i]
			}
		}
	}
	var errs field.ErrorList
	for i := range podSets {
		ps := &podSets[i]
		annotations := TopologyAnnotations(ps.Template.Annotations)
		if b, ok := before[ps.Name]; ok && b.Count == ps.Count && sameMap(TopologyAnnotations(b.Template.Annotations), annotations) {
			continue
		}
		if annotations == nil {
			continue
		}
		errs = append(errs, ValidateTopologyAnnotations(annotations, ps.Count, templatePath(job, ps.Name).Child("metadata", "annotations"))...)
	}
	return errs
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// JobWithTemplatePaths is a Job that can say where a PodSet's pod
// template is in the job object, so that the webhook's errors about the
// template's annotations name the field the user wrote.
type JobWithTemplatePaths interface {
	Job
	// TemplatePath is the path of the pod template of a PodSet.
	TemplatePath(podSet kueue.PodSetReference) *field.Path
}

// templatePath is where a PodSet's pod template is; for a kind that does
// not say, "podSets[<name>].template".
func templatePath(job Job, name kueue.PodSetReference) *field.Path {
	if j, ok := job.(JobWithTemplatePaths); ok {
		if p := j.TemplatePath(name); p != nil {
			return p
		}
	}
	return field.NewPath("podSets").Key(string(name)).Child("template")
}

// hasGate reports whether gates hold one named name.
func hasGate(gates []corev1.PodSchedulingGate, name string) bool {
	return slices.ContainsFunc(gates, func(g corev1.PodSchedulingGate) bool { return g.Name == name })
}

// HasTopologyGate reports whether the pod carries the topology gate.
func HasTopologyGate(p *corev1.Pod) bool { return hasGate(p.Spec.SchedulingGates, TopologyGate) }

// RemoveGate removes the gate named name from a pod; it reports whether it
// was there.
func RemoveGate(p *corev1.Pod, name string) bool {
	n := len(p.Spec.SchedulingGates)
	p.Spec.SchedulingGates = slices.DeleteFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == name })
	if len(p.Spec.SchedulingGates) == 0 {
		p.Spec.SchedulingGates = nil
	}
	return len(p.Spec.SchedulingGates) != n
}
