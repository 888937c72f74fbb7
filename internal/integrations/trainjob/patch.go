package trainjob

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// RunWithPodSetsInfo writes the admission into Kuota's own entry of
// spec.runtimePatches (manager kueue.x-k8s.io/manager): per replicated
// job, the pod template's labels and annotations, the flavors' node
// selector, the tolerations and the scheduling gates (the topology gate of
// a topology-aware admission); then it lifts spec.suspend. The trainer
// treats a patch's tolerations as a whole list, so the entry carries the
// template's own tolerations too. The user's patches are left alone.
func (t *TrainJob) RunWithPodSetsInfo(infos []jobframework.PodSetInfo) error {
	if t.loadErr != nil {
		return t.loadErr
	}
	if len(infos) != len(t.jobs) {
		return fmt.Errorf("the TrainJob's runtime has %d replicated jobs, the admission %d PodSets", len(t.jobs), len(infos))
	}
	seen := map[string]bool{}
	rjPatches := make([]any, 0, len(infos))
	for _, info := range infos {
		name := string(info.Name)
		i := slices.IndexFunc(t.jobs, func(rj replicatedJob) bool { return rj.Name == name })
		if i < 0 || seen[name] {
			return fmt.Errorf("admission PodSet %q does not match one replicated job of the runtime", name)
		}
		seen[name] = true
		p, err := replicatedJobPatch(t.jobs[i].Template.Spec, info)
		if err != nil {
			return fmt.Errorf("podset %s: %w", name, err)
		}
		rjPatches = append(rjPatches, p)
	}
	patches, err := listAt(t.u.Object, runtimePatchesPath)
	if err != nil {
		return err
	}
	own := map[string]any{}
	setNested(own, PatchManager, patchManagerPath)
	setNested(own, rjPatches, patchReplicatedJobsPath)
	out := make([]any, 0, len(patches)+1)
	replaced := false
	for _, p := range patches {
		if m, _ := stringAt(p, patchManagerPath); m == PatchManager {
			out, replaced = append(out, own), true
			continue
		}
		out = append(out, p)
	}
	if !replaced {
		out = append(out, own)
	}
	setAt(t.u, out, runtimePatchesPath)
	setAt(t.u, false, suspendPath)
	return nil
}

// replicatedJobPatch is the patch of one replicated job for an admission.
func replicatedJobPatch(spec corev1.PodSpec, info jobframework.PodSetInfo) (map[string]any, error) {
	p := map[string]any{}
	setNested(p, string(info.Name), rjPatchNamePath)
	meta := map[string]any{}
	if len(info.Labels) > 0 {
		meta["labels"] = stringMapValue(info.Labels)
	}
	if len(info.Annotations) > 0 {
		meta["annotations"] = stringMapValue(info.Annotations)
	}
	if len(meta) > 0 {
		setNested(p, meta, rjPatchPodMetaPath)
	}
	if len(info.NodeSelector) > 0 {
		for k, v := range info.NodeSelector {
			if old, ok := spec.NodeSelector[k]; ok && old != v {
				return nil, fmt.Errorf("node selector %s=%s conflicts with the flavor's %s=%s", k, old, k, v)
			}
		}
		setNested(p, stringMapValue(info.NodeSelector), rjPatchNodeSelectorPath)
	}
	if len(info.Tolerations) > 0 {
		all := slices.Clone(spec.Tolerations)
		for _, tol := range info.Tolerations {
			if !slices.ContainsFunc(all, func(x corev1.Toleration) bool { return x.MatchToleration(&tol) }) {
				all = append(all, tol)
			}
		}
		v, err := tolerationsValue(all)
		if err != nil {
			return nil, err
		}
		setNested(p, v, rjPatchTolerationsPath)
	}
	if len(info.SchedulingGates) > 0 {
		// Like tolerations, a whole list: the template's gates too.
		all := jobframework.AppendGates(slices.Clone(spec.SchedulingGates), info.SchedulingGates...)
		gates := make([]any, 0, len(all))
		for _, g := range all {
			gates = append(gates, map[string]any{"name": g.Name})
		}
		setNested(p, gates, rjPatchGatesPath)
	}
	return p, nil
}

// RestorePodSetsInfo removes Kuota's runtime patch, which is all an
// admission changed; it reports whether there was one.
func (t *TrainJob) RestorePodSetsInfo([]jobframework.PodSetInfo) bool {
	patches, err := listAt(t.u.Object, runtimePatchesPath)
	if err != nil {
		return false
	}
	kept := make([]any, 0, len(patches))
	for _, p := range patches {
		if m, _ := stringAt(p, patchManagerPath); m != PatchManager {
			kept = append(kept, p)
		}
	}
	if len(kept) == len(patches) {
		return false
	}
	if len(kept) == 0 {
		spec, _ := t.u.Object["spec"].(map[string]any)
		delete(spec, runtimePatchesPath[len(runtimePatchesPath)-1])
		return true
	}
	setAt(t.u, kept, runtimePatchesPath)
	return true
}

// setNested writes value at path inside m, creating parent objects.
func setNested(m map[string]any, value any, path []string) {
	cur := m
	for _, p := range path[:len(path)-1] {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[p] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = value
}
