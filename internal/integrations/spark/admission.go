package spark

import (
	"fmt"
	"maps"
	"slices"

	sparkv1beta2 "github.com/kubeflow/spark-operator/v2/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
)

// roleOf is the role of a PodSet.
func roleOf(name kueue.PodSetReference) *role {
	switch name {
	case DriverPodSet:
		return driverRole
	case ExecutorPodSet:
		return executorRole
	}
	return nil
}

// infosByRole pairs the driver's and the executors' infos with their roles.
func infosByRole(infos []jobframework.PodSetInfo) (map[*role]jobframework.PodSetInfo, error) {
	out := map[*role]jobframework.PodSetInfo{}
	for _, info := range infos {
		r := roleOf(info.Name)
		if r == nil {
			return nil, fmt.Errorf("podset %q: a SparkApplication has only the PodSets %q and %q", info.Name, DriverPodSet, ExecutorPodSet)
		}
		out[r] = info
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("a SparkApplication needs the infos of both PodSets %q and %q, got %d", DriverPodSet, ExecutorPodSet, len(infos))
	}
	return out, nil
}

// appLevelNodeSelector reports whether the application sets its node
// selector in spec.nodeSelector, which excludes the driver's and
// executors' own: the admission's node labels then go there.
func appLevelNodeSelector(app *sparkv1beta2.SparkApplication) bool {
	return len(app.Spec.NodeSelector) > 0
}

// RunWithPodSetsInfo puts the admission into spec.driver and spec.executor
// (node selector, tolerations, labels, annotations) and lifts
// spec.suspend. An application with spec.nodeSelector gets the node labels
// there, which both its driver and its executors must then agree on.
func (a *Application) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	byRole, err := infosByRole(infos)
	if err != nil {
		return err
	}
	for _, r := range []*role{driverRole, executorRole} {
		t, errs := podTemplate(a.app, r)
		if len(errs) > 0 {
			return errs.ToAggregate()
		}
		if err := jobframework.ApplyToTemplate(t, byRole[r]); err != nil {
			return err
		}
	}
	if appLevelNodeSelector(a.app) {
		d, e := byRole[driverRole].NodeSelector, byRole[executorRole].NodeSelector
		for k, v := range e {
			if dv, ok := d[k]; ok && dv != v {
				return fmt.Errorf("spec.nodeSelector: the driver's flavor needs %s=%s and the executors' %s=%s, but spec.nodeSelector applies to both; set spec.driver.nodeSelector and spec.executor.nodeSelector instead", k, dv, k, v)
			}
		}
		a.app.Spec.NodeSelector = merged(a.app.Spec.NodeSelector, d, e)
	}
	for _, r := range []*role{driverRole, executorRole} {
		info, ps := byRole[r], r.podSpec(a.app)
		if !appLevelNodeSelector(a.app) {
			ps.NodeSelector = merged(ps.NodeSelector, info.NodeSelector)
		}
		ps.Tolerations = appendNewTolerations(ps.Tolerations, info.Tolerations)
		ps.Labels = merged(ps.Labels, info.Labels)
		ps.Annotations = merged(ps.Annotations, info.Annotations)
		if len(info.SchedulingGates) > 0 {
			// Spark's own fields have no scheduling gates: the pod
			// template does.
			if ps.Template == nil {
				ps.Template = &corev1.PodTemplateSpec{}
			}
			ps.Template.Spec.SchedulingGates = jobframework.AppendGates(ps.Template.Spec.SchedulingGates, info.SchedulingGates...)
		}
	}
	a.app.Spec.Suspend = ptr.To(false)
	return nil
}

// appendNewTolerations appends the tolerations not already present.
func appendNewTolerations(list, add []corev1.Toleration) []corev1.Toleration {
	for _, t := range add {
		if !slices.ContainsFunc(list, func(x corev1.Toleration) bool { return x.MatchToleration(&t) && x.Value == t.Value }) {
			list = append(list, t)
		}
	}
	return list
}

// RestorePodSetsInfo puts spec.driver's and spec.executor's node
// selectors, tolerations, labels and annotations (or spec.nodeSelector)
// back as the Workload recorded the pods, less what their own templates
// already give the pods. It reports whether anything changed.
func (a *Application) RestorePodSetsInfo(infos []jobframework.PodSetInfo) bool {
	byRole, err := infosByRole(infos)
	if err != nil {
		return false
	}
	changed := false
	for _, r := range []*role{driverRole, executorRole} {
		info, ps := byRole[r], r.podSpec(a.app)
		var base corev1.PodTemplateSpec
		if ps.Template != nil {
			base = *ps.Template
		}
		if appLevelNodeSelector(a.app) {
			if r == driverRole {
				changed = setMap(&a.app.Spec.NodeSelector, without(info.NodeSelector, base.Spec.NodeSelector)) || changed
			}
		} else {
			changed = setMap(&ps.NodeSelector, without(info.NodeSelector, base.Spec.NodeSelector)) || changed
		}
		changed = setMap(&ps.Labels, without(info.Labels, base.Labels)) || changed
		changed = setMap(&ps.Annotations, without(info.Annotations, base.Annotations)) || changed
		tols := tolerationsBeyond(info.Tolerations, base.Spec.Tolerations)
		if !slices.EqualFunc(ps.Tolerations, tols, sameToleration) {
			ps.Tolerations, changed = tols, true
		}
		changed = restoreGates(ps, info.SchedulingGates) || changed
	}
	return changed
}

// restoreGates puts the pod template's scheduling gates back (a template
// made only to hold the admission's gates goes again); it reports whether
// anything changed.
func restoreGates(ps *sparkv1beta2.SparkPodSpec, gates []corev1.PodSchedulingGate) bool {
	if ps.Template == nil || slices.Equal(ps.Template.Spec.SchedulingGates, gates) {
		return false
	}
	ps.Template.Spec.SchedulingGates = slices.Clone(gates)
	if equality.Semantic.DeepEqual(*ps.Template, corev1.PodTemplateSpec{}) {
		ps.Template = nil
	}
	return true
}

// without is m less the entries base holds with the same value; nil when
// nothing is left.
func without(m, base map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if bv, ok := base[k]; ok && bv == v {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// setMap sets *dst to m when they differ and reports whether it did.
func setMap(dst *map[string]string, m map[string]string) bool {
	if maps.Equal(*dst, m) {
		return false
	}
	*dst = maps.Clone(m)
	return true
}

func sameToleration(a, b corev1.Toleration) bool { return a.MatchToleration(&b) && a.Value == b.Value }

// tolerationsBeyond is what list adds to the template's tolerations: the
// pods get the template's, then the role's.
func tolerationsBeyond(list, base []corev1.Toleration) []corev1.Toleration {
	if len(list) >= len(base) && slices.EqualFunc(list[:len(base)], base, sameToleration) {
		return slices.Clone(list[len(base):])
	}
	var out []corev1.Toleration
	for _, t := range list {
		if !slices.ContainsFunc(base, func(b corev1.Toleration) bool { return sameToleration(b, t) }) {
			out = append(out, t)
		}
	}
	return out
}
