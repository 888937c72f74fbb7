package jobframework

import (
	"context"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// AdmissionInfos returns what an admitted Workload applies to its job's
// PodSets: the admitted counts, the node labels and tolerations of the
// flavors each PodSet was assigned, the admission checks' podSetUpdates,
// and the labels and annotations that tie pods to the Workload. A PodSet
// with a topology assignment has its pods created with TopologyGate and
// TASLabel: the topology ungater gives each its domain before they are
// scheduled. Every PodSet's pods get PodJobUIDLabel, naming the job, so
// that pods made through the job's child objects are found as its own.
func AdmissionInfos(ctx context.Context, c client.Reader, wl *kueue.Workload) ([]PodSetInfo, error) {
	adm := wl.Status.Admission
	if adm == nil {
		return nil, fmt.Errorf("workload %s/%s has no admission", wl.Namespace, wl.Name)
	}
	jobUID := podJobUID(wl)
	flavors := map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor{}
	out := make([]PodSetInfo, 0, len(adm.PodSetAssignments))
	for _, psa := range adm.PodSetAssignments {
		info := PodSetInfo{
			Name:         psa.Name,
			Count:        countOf(wl, psa),
			NodeSelector: map[string]string{},
			Labels:       map[string]string{PodSetLabel: string(psa.Name)},
			Annotations:  map[string]string{WorkloadAnnotation: wl.Name},
		}
		if cq := string(adm.ClusterQueue); cq != "" {
			info.Labels[ClusterQueueLabel] = cq
		}
		if wl.Spec.QueueName != "" {
			info.Labels[LocalQueueLabel] = string(wl.Spec.QueueName)
		}
		if psa.TopologyAssignment != nil {
			info.Labels[TASLabel] = TASLabelValue
			info.SchedulingGates = []corev1.PodSchedulingGate{{Name: TopologyGate}}
		}
		for _, name := range sortedFlavors(psa.Flavors) {
			rf, err := flavor(ctx, c, flavors, name)
			if err != nil {
				return nil, err
			}
			maps.Copy(info.NodeSelector, rf.Spec.NodeLabels)
			info.Tolerations = appendNew(info.Tolerations, rf.Spec.Tolerations...)
		}
		for _, check := range wl.Status.AdmissionChecks {
			for _, u := range check.PodSetUpdates {
				if u.Name != psa.Name {
					continue
				}
				maps.Copy(info.Labels, u.Labels)
				maps.Copy(info.Annotations, u.Annotations)
				maps.Copy(info.NodeSelector, u.NodeSelector)
				info.Tolerations = appendNew(info.Tolerations, u.Tolerations...)
			}
		}
		if jobUID != "" {
			// Last, so that no podSetUpdate hides the pods from their job.
			info.Labels[PodJobUIDLabel] = jobUID
		}
		out = append(out, info)
	}
	return out, nil
}

// podJobUID is the value of PodJobUIDLabel for the pods of wl's job: the
// UID of its controller owner. None when it has none, or when it is a pod
// (a plain pod's own Workload: the pod is the job).
func podJobUID(wl *kueue.Workload) string {
	ref := metav1.GetControllerOfNoCopy(wl)
	if ref == nil || (ref.APIVersion == "v1" && ref.Kind == "Pod") {
		return ""
	}
	return string(ref.UID)
}

// RestoreInfos returns what stopping a job puts back: the pod template
// metadata, node selector, tolerations and scheduling gates, and the
// counts, of the job as its Workload recorded it before any admission.
func RestoreInfos(wl *kueue.Workload) []PodSetInfo {
	out := make([]PodSetInfo, 0, len(wl.Spec.PodSets))
	for _, ps := range wl.Spec.PodSets {
		out = append(out, PodSetInfo{
			Name:            ps.Name,
			Count:           ps.Count,
			NodeSelector:    maps.Clone(ps.Template.Spec.NodeSelector),
			Tolerations:     slices.Clone(ps.Template.Spec.Tolerations),
			Labels:          maps.Clone(ps.Template.Labels),
			Annotations:     maps.Clone(ps.Template.Annotations),
			SchedulingGates: slices.Clone(ps.Template.Spec.SchedulingGates),
		})
	}
	return out
}

// countOf is the admitted count of a PodSet (its full count when the
// assignment does not say).
func countOf(wl *kueue.Workload, psa kueue.PodSetAssignment) int32 {
	if psa.Count != nil {
		return *psa.Count
	}
	for _, ps := range wl.Spec.PodSets {
		if ps.Name == psa.Name {
			return ps.Count
		}
	}
	return 0
}

func sortedFlavors(m map[corev1.ResourceName]kueue.ResourceFlavorReference) []kueue.ResourceFlavorReference {
	var out []kueue.ResourceFlavorReference
	for _, f := range m {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

func flavor(ctx context.Context, c client.Reader, seen map[kueue.ResourceFlavorReference]*kueue.ResourceFlavor,
	name kueue.ResourceFlavorReference) (*kueue.ResourceFlavor, error) {
	if rf, ok := seen[name]; ok {
		return rf, nil
	}
	var rf kueue.ResourceFlavor
	if err := c.Get(ctx, types.NamespacedName{Name: string(name)}, &rf); err != nil {
		return nil, fmt.Errorf("reading ResourceFlavor %s: %w", name, err)
	}
	seen[name] = &rf
	return &rf, nil
}

// appendNew appends the tolerations not already present.
func appendNew(list []corev1.Toleration, add ...corev1.Toleration) []corev1.Toleration {
	for _, t := range add {
		if !slices.ContainsFunc(list, func(x corev1.Toleration) bool { return x.MatchToleration(&t) }) {
			list = append(list, t)
		}
	}
	return list
}

// ApplyToTemplate merges an admission's info into a pod template. A node
// selector key the template already sets to another value is an error:
// the pods could never run on the flavor's nodes.
func ApplyToTemplate(t *corev1.PodTemplateSpec, info PodSetInfo) error {
	for k, v := range info.NodeSelector {
		if old, ok := t.Spec.NodeSelector[k]; ok && old != v {
			return fmt.Errorf("podset %s: node selector %s=%s conflicts with the flavor's %s=%s", info.Name, k, old, k, v)
		}
	}
	if len(info.NodeSelector) > 0 {
		if t.Spec.NodeSelector == nil {
			t.Spec.NodeSelector = map[string]string{}
		}
		maps.Copy(t.Spec.NodeSelector, info.NodeSelector)
	}
	t.Spec.Tolerations = appendNew(t.Spec.Tolerations, info.Tolerations...)
	if len(info.Labels) > 0 {
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		maps.Copy(t.Labels, info.Labels)
	}
	if len(info.Annotations) > 0 {
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		maps.Copy(t.Annotations, info.Annotations)
	}
	t.Spec.SchedulingGates = AppendGates(t.Spec.SchedulingGates, info.SchedulingGates...)
	return nil
}

// AppendGates appends the scheduling gates not already in list.
func AppendGates(list []corev1.PodSchedulingGate, add ...corev1.PodSchedulingGate) []corev1.PodSchedulingGate {
	for _, g := range add {
		if !hasGate(list, g.Name) {
			list = append(list, g)
		}
	}
	return list
}

// RestoreTemplate sets a pod template's metadata, node selector,
// tolerations and scheduling gates back to info's; it reports whether
// anything changed.
func RestoreTemplate(t *corev1.PodTemplateSpec, info PodSetInfo) bool {
	changed := false
	if !maps.Equal(t.Spec.NodeSelector, info.NodeSelector) {
		t.Spec.NodeSelector, changed = maps.Clone(info.NodeSelector), true
	}
	if !slices.EqualFunc(t.Spec.Tolerations, info.Tolerations, func(a, b corev1.Toleration) bool { return a.MatchToleration(&b) && a.Value == b.Value }) {
		t.Spec.Tolerations, changed = slices.Clone(info.Tolerations), true
	}
	if !maps.Equal(t.Labels, info.Labels) {
		t.Labels, changed = maps.Clone(info.Labels), true
	}
	if !maps.Equal(t.Annotations, info.Annotations) {
		t.Annotations, changed = maps.Clone(info.Annotations), true
	}
	if !slices.Equal(t.Spec.SchedulingGates, info.SchedulingGates) {
		t.Spec.SchedulingGates, changed = slices.Clone(info.SchedulingGates), true
	}
	return changed
}
