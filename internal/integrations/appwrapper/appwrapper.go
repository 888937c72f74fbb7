// Package appwrapper queues AppWrappers (workload.codeflare.dev/v1beta2):
// an AppWrapper wraps components (any Kubernetes objects) and is one
// Workload with a PodSet per pod set of its components, in the order of
// the components and of their pod sets, named "<AppWrapper name>-<i>"
// (i counts across all components from 0), of the pod set's replicas
// (default 1), as in Kueue. A component's pod sets are its
// spec.components[].podSets (a path to a PodTemplateSpec inside the
// component's template, and replicas), or, when it declares none, those
// the AppWrapper project infers for the kinds it knows (Pod, Job,
// Deployment, StatefulSet, JobSet, PyTorchJob, RayCluster, RayJob).
//
// The webhook creates managed AppWrappers suspended (spec.suspend). An
// admission writes each pod set's node selector, tolerations, labels and
// annotations into the component's spec.components[i].podSetInfos and
// lifts the suspension; the AppWrapper controller then creates the
// components with those merged into their pod templates. An eviction
// suspends the AppWrapper (its controller deletes the components) and
// clears the podSetInfos. The AppWrapper is finished when its
// status.phase is Succeeded or Failed (once a failed AppWrapper's
// resources are deleted). The objects it wraps are not queued on their
// own: their controller owner is the AppWrapper.
package appwrapper

import (
	"fmt"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	awutils "github.com/project-codeflare/appwrapper/pkg/utils"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// FrameworkName is the name in integrations.frameworks.
const FrameworkName = "workload.codeflare.dev/appwrapper"

// GVK is the kind this package handles.
var GVK = awv1beta2.GroupVersion.WithKind("AppWrapper")

// AppWrapper wraps an AppWrapper.
type AppWrapper struct{ aw *awv1beta2.AppWrapper }

var (
	_ jobframework.Job             = (*AppWrapper)(nil)
	_ jobframework.JobWithPodIndex = (*AppWrapper)(nil)
)

// PodIndex: the index labels the AppWrapper's pod set annotations name
// (the AppWrapper project's, filled in when it infers the pod sets of a
// wrapped Job or JobSet).
func (j *AppWrapper) PodIndex(ps *kueue.PodSet) jobframework.PodIndex {
	sets, err := componentPodSets(j.aw)
	if err != nil {
		return jobframework.PodIndex{}
	}
	n := 0
	for _, comp := range sets {
		for _, p := range comp {
			if PodSetName(j.aw.Name, n) == ps.Name {
				return jobframework.PodIndex{Label: p.Annotations[awutils.PodSetAnnotationTASPodIndexLabel],
					SubGroupLabel: p.Annotations[awutils.PodSetAnnotationTASSubGroupIndexLabel]}
			}
			n++
		}
	}
	return jobframework.PodIndex{}
}

// New wraps obj, which must be an *awv1beta2.AppWrapper (a new one when
// nil).
func New(obj client.Object) jobframework.Job {
	if obj == nil {
		return &AppWrapper{aw: &awv1beta2.AppWrapper{}}
	}
	return &AppWrapper{aw: obj.(*awv1beta2.AppWrapper)}
}

// Object returns the AppWrapper.
func (j *AppWrapper) Object() client.Object { return j.aw }

// IsSuspended reports spec.suspend.
func (j *AppWrapper) IsSuspended() bool { return j.aw.Spec.Suspend }

// Suspend sets spec.suspend; the AppWrapper controller deletes the
// components.
func (j *AppWrapper) Suspend() { j.aw.Spec.Suspend = true }

var componentsPath = field.NewPath("spec", "components")

// PodSetName is the name of the AppWrapper's i-th pod set (counted across
// its components).
func PodSetName(awName string, i int) kueue.PodSetReference {
	return kueue.PodSetReference(fmt.Sprintf("%s-%d", awName, i))
}

// componentPodSets returns each component's pod sets: those its
// controller recorded in status.componentStatus (when it has one entry
// per component), else those declared in spec.components[].podSets, else
// those inferred for a kind the AppWrapper project knows. A template
// that is not an object, or pod sets that cannot be inferred, is an
// error naming the component.
func componentPodSets(aw *awv1beta2.AppWrapper) ([][]awv1beta2.AppWrapperPodSet, error) {
	comps := aw.Spec.Components
	out := make([][]awv1beta2.AppWrapperPodSet, len(comps))
	fromStatus := len(aw.Status.ComponentStatus) == len(comps)
	for i := range comps {
		switch {
		case fromStatus:
			out[i] = aw.Status.ComponentStatus[i].PodSets
		case len(comps[i].DeclaredPodSets) > 0:
			out[i] = comps[i].DeclaredPodSets
		default:
			obj, err := decodeTemplate(&comps[i])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", componentsPath.Index(i).Child("template"), err)
			}
			inferred, err := awutils.InferPodSets(obj)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", componentsPath.Index(i).Child("podSets"), err)
			}
			out[i] = inferred
		}
	}
	return out, nil
}

// decodeTemplate reads a component's template as an object.
func decodeTemplate(c *awv1beta2.AppWrapperComponent) (*unstructured.Unstructured, error) {
	if len(c.Template.Raw) == 0 {
		return nil, fmt.Errorf("the component has no template")
	}
	obj := &unstructured.Unstructured{}
	if _, _, err := unstructured.UnstructuredJSONScheme.Decode(c.Template.Raw, nil, obj); err != nil {
		return nil, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	return obj, nil
}

// PodSets returns one PodSet per pod set of the components, in order.
// Each one's template is the AppWrapper project's reading of the
// PodTemplateSpec at the pod set's path (as the API server would default
// the fields Kueue compares); its count is the pod set's replicas.
func (j *AppWrapper) PodSets() ([]kueue.PodSet, error) {
	sets, err := componentPodSets(j.aw)
	if err != nil {
		return nil, err
	}
	var out []kueue.PodSet
	for i, ps := range sets {
		if len(ps) == 0 {
			continue
		}
		obj, err := decodeTemplate(&j.aw.Spec.Components[i])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", componentsPath.Index(i).Child("template"), err)
		}
		for k, p := range ps {
			t, err := awutils.GetPodTemplateSpec(obj, p.Path)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", componentsPath.Index(i).Child("podSets").Index(k).Child("path"), err)
			}
			out = append(out, kueue.PodSet{Name: PodSetName(j.aw.Name, len(out)), Count: awutils.Replicas(p), Template: *t})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: the AppWrapper has no pod set", componentsPath)
	}
	return out, nil
}

// RunWithPodSetsInfo writes each pod set's admission into its
// component's podSetInfos (the AppWrapper controller merges them into the
// pod templates of the objects it creates) and resumes the AppWrapper.
// Every pod set must be in the admission. AppWrappers have no partial
// admission: counts are not written.
func (j *AppWrapper) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	sets, err := componentPodSets(j.aw)
	if err != nil {
		return err
	}
	byName := make(map[kueue.PodSetReference]jobframework.PodSetInfo, len(infos))
	for _, info := range infos {
		byName[info.Name] = info
	}
	n := 0
	for i, ps := range sets {
		comp := &j.aw.Spec.Components[i]
		comp.PodSetInfos = make([]awv1beta2.AppWrapperPodSetInfo, len(ps))
		for k := range ps {
			name := PodSetName(j.aw.Name, n)
			n++
			info, ok := byName[name]
			if !ok {
				return fmt.Errorf("the admission has no PodSet %s (pod set %d of component %d)", name, k, i)
			}
			comp.PodSetInfos[k] = awv1beta2.AppWrapperPodSetInfo{
				Annotations:     info.Annotations,
				Labels:          info.Labels,
				NodeSelector:    info.NodeSelector,
				Tolerations:     info.Tolerations,
				SchedulingGates: info.SchedulingGates,
			}
		}
	}
	if n != len(infos) {
		return fmt.Errorf("the AppWrapper has %d pod sets, the admission has %d PodSets", n, len(infos))
	}
	j.aw.Spec.Suspend = false
	return nil
}

// RestorePodSetsInfo clears every component's podSetInfos: the
// templates themselves were never changed. It reports whether any was
// set.
func (j *AppWrapper) RestorePodSetsInfo([]jobframework.PodSetInfo) bool {
	changed := false
	for i := range j.aw.Spec.Components {
		if j.aw.Spec.Components[i].PodSetInfos != nil {
			j.aw.Spec.Components[i].PodSetInfos = nil
			changed = true
		}
	}
	return changed
}

// Finished reads status.phase: Succeeded, or Failed once the AppWrapper
// controller has deleted the failed AppWrapper's resources (until then
// they still hold their quota).
func (j *AppWrapper) Finished() (string, bool, bool) {
	switch j.aw.Status.Phase {
	case awv1beta2.AppWrapperSucceeded:
		return "AppWrapper finished successfully", true, true
	case awv1beta2.AppWrapperFailed:
		if meta.IsStatusConditionTrue(j.aw.Status.Conditions, string(awv1beta2.ResourcesDeployed)) {
			return "", false, false
		}
		return "AppWrapper failed", false, true
	}
	return "", false, false
}

// IsActive reports whether the AppWrapper controller still holds the
// quota (its QuotaReserved condition): it keeps it until the components
// it created are gone.
func (j *AppWrapper) IsActive() bool {
	return meta.IsStatusConditionTrue(j.aw.Status.Conditions, string(awv1beta2.QuotaReserved))
}

// PodsReady reads the AppWrapper's PodsReady condition.
func (j *AppWrapper) PodsReady() bool {
	return meta.IsStatusConditionTrue(j.aw.Status.Conditions, string(awv1beta2.PodsReady))
}

// sameComponents reports whether two AppWrappers wrap the same objects
// with the same pod sets (podSetInfos aside).
func sameComponents(a, b []awv1beta2.AppWrapperComponent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equality.Semantic.DeepEqual(a[i].DeclaredPodSets, b[i].DeclaredPodSets) ||
			!equality.Semantic.DeepEqual(a[i].Template.Raw, b[i].Template.Raw) {
			return false
		}
	}
	return true
}
