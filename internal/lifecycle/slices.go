package lifecycle

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/workload"
)

// ReplacedSlice returns the key of the slice a Workload slice of an
// elastic job replaces (its WorkloadSliceReplacementForAnnotation), when
// it names one in the Workload's namespace.
func ReplacedSlice(wl *kueue.Workload) (types.NamespacedName, bool) {
	v, ok := wl.Annotations[kueue.WorkloadSliceReplacementForAnnotation]
	if !ok {
		return types.NamespacedName{}, false
	}
	ns, name, ok := strings.Cut(v, "/")
	if !ok || ns != wl.Namespace || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, true
}

// AsReplacement makes the queue entry of a pending slice (info, built from
// wl) ask only for the pods it adds to old, the slice it replaces, which
// holds quota in the same ClusterQueue: the Shape counts the pods added
// per PodSet, pinned to the flavors old holds. Admitting it takes old's
// quota over (the scheduler writes wl's admission at its whole size and
// finishes old). It reports false, leaving info alone, when the two do not
// combine: other PodSets, fewer pods than old in some PodSet, or a PodSet
// old holds by topology (the slice then waits for its whole size).
func AsReplacement(info *workload.Info, wl, old *kueue.Workload, v *View, opts *Options) bool {
	adm := old.Status.Admission
	if adm == nil || len(adm.PodSetAssignments) != len(wl.Spec.PodSets) {
		return false
	}
	added := make([]kueue.PodSet, len(wl.Spec.PodSets))
	rep := &workload.Replacement{Key: KeyOf(old), UID: old.UID}
	for i, ps := range wl.Spec.PodSets {
		psa := &adm.PodSetAssignments[i]
		if psa.Name != ps.Name || psa.TopologyAssignment != nil || psa.DelayedTopologyRequest != nil {
			return false
		}
		held := ps.Count
		if psa.Count != nil {
			held = *psa.Count
		} else if i < len(old.Spec.PodSets) {
			held = old.Spec.PodSets[i].Count
		}
		if held > ps.Count {
			return false
		}
		added[i] = ps
		added[i].Count = ps.Count - held
		added[i].MinCount = nil
		rep.Counts = append(rep.Counts, ps.Count)
		flavors := make(map[corev1.ResourceName]kueue.ResourceFlavorReference, len(psa.Flavors))
		for r, f := range psa.Flavors {
			flavors[r] = f
		}
		rep.Flavors = append(rep.Flavors, flavors)
	}
	info.Shape = workload.ShapeFromPodSets(added, shapeOptions(v, opts))
	info.Replaces = rep
	return true
}
