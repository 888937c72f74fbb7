package validation

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// validateWorkloadStatus checks the status of wl; oldWL is the stored
// Workload on update, nil on creation.
func validateWorkloadStatus(oldWL, wl *kueue.Workload) field.ErrorList {
	status := field.NewPath("status")
	errs := validateAdmissionPresence(oldWL, wl, status.Child("admission"))
	errs = append(errs, validateAdmission(oldWL, wl, status.Child("admission"))...)
	errs = append(errs, validateReclaimablePods(oldWL, wl, status.Child("reclaimablePods"))...)
	errs = append(errs, validateCheckPodSetUpdates(oldWL, wl, status.Child("admissionChecks"))...)
	if oldWL != nil {
		errs = append(errs, validateClusterName(oldWL, wl, status.Child("clusterName"))...)
	}
	return errs
}

// validateAdmissionPresence requires status.admission exactly while
// QuotaReserved is True. An update that keeps an inconsistency the stored
// object already had is let through, so that it can be repaired.
func validateAdmissionPresence(oldWL, wl *kueue.Workload, path *field.Path) field.ErrorList {
	has, held := wl.Status.Admission != nil, reserved(wl)
	if has == held {
		return nil
	}
	if oldWL != nil && (oldWL.Status.Admission != nil) == has && reserved(oldWL) == held {
		return nil
	}
	if has {
		return field.ErrorList{field.Forbidden(path,
			"may only be set while the QuotaReserved condition is True: set both in the same write, and clear them together")}
	}
	return field.ErrorList{field.Required(path, "must be set while the QuotaReserved condition is True")}
}

// validateAdmission checks a new or changed admission. While the stored
// Workload holds a reservation its admission cannot change, except for the
// topology fields (filled in, or redone after a node failure, later) and,
// for an elastic Workload, lower counts. Otherwise the admission must name
// its ClusterQueue and PodSets of the Workload, with counts and usage that
// agree.
func validateAdmission(oldWL, wl *kueue.Workload, path *field.Path) field.ErrorList {
	adm := wl.Status.Admission
	if adm == nil || oldWL != nil && semantic.DeepEqual(oldWL.Status.Admission, adm) {
		return nil
	}
	if oldWL != nil && oldWL.Status.Admission != nil && reserved(oldWL) {
		return validateAdmissionUnchanged(oldWL.Status.Admission, adm, elastic(wl), path)
	}
	var errs field.ErrorList
	if adm.ClusterQueue == "" {
		errs = append(errs, field.Required(path.Child("clusterQueue"), "must name the ClusterQueue that holds the reservation"))
	}
	counts := podSetCounts(wl)
	for i := range adm.PodSetAssignments {
		errs = append(errs, validateAssignment(&adm.PodSetAssignments[i], counts, path.Child("podSetAssignments").Index(i))...)
	}
	return errs
}

// validateAssignment checks one PodSet assignment: it names a PodSet, does
// not admit more pods than the PodSet has, and its usage is count times a
// per-pod amount.
func validateAssignment(psa *kueue.PodSetAssignment, counts map[kueue.PodSetReference]int32, path *field.Path) field.ErrorList {
	specCount, ok := counts[psa.Name]
	if !ok {
		return field.ErrorList{field.Invalid(path.Child("name"), psa.Name, "must name a PodSet of spec.podSets")}
	}
	if psa.Count == nil {
		return nil
	}
	n := *psa.Count
	if n > specCount {
		return field.ErrorList{field.Invalid(path.Child("count"), n,
			fmt.Sprintf("must not exceed the count of PodSet %q (%d)", psa.Name, specCount))}
	}
	var errs field.ErrorList
	for _, r := range sortedKeys(psa.ResourceUsage) {
		if q := psa.ResourceUsage[r]; n > 0 && !divisibleBy(q, int64(n)) {
			errs = append(errs, field.Invalid(path.Child("resourceUsage").Key(string(r)), q.String(),
				fmt.Sprintf("must be divisible by count (%d): it is the usage of that many identical pods", n)))
		}
	}
	return errs
}

// validateAdmissionUnchanged compares a changed admission with the one the
// reservation was made with.
func validateAdmissionUnchanged(before, after *kueue.Admission, elastic bool, path *field.Path) field.ErrorList {
	const why = "cannot change once the admission is set; clear the admission (with QuotaReserved=False) first"
	var errs field.ErrorList
	if before.ClusterQueue != after.ClusterQueue {
		errs = append(errs, field.Forbidden(path.Child("clusterQueue"), fmt.Sprintf("%s (was %q)", why, before.ClusterQueue)))
	}
	ap := path.Child("podSetAssignments")
	if len(before.PodSetAssignments) != len(after.PodSetAssignments) {
		return append(errs, field.Forbidden(ap, "the PodSets of an admission "+why))
	}
	for i := range after.PodSetAssignments {
		j := slices.IndexFunc(before.PodSetAssignments, func(p kueue.PodSetAssignment) bool {
			return p.Name == after.PodSetAssignments[i].Name
		})
		if j < 0 || !sameAssignment(before.PodSetAssignments[j], after.PodSetAssignments[i], elastic) {
			errs = append(errs, field.Forbidden(ap.Index(i), why+"; only topologyAssignment and delayedTopologyRequest may be updated"))
		}
	}
	return errs
}

// sameAssignment compares two assignments of a PodSet, leaving out the
// topology fields; for an elastic Workload a lower count (and its usage) is
// allowed too.
func sameAssignment(before, after kueue.PodSetAssignment, elastic bool) bool {
	before.TopologyAssignment, before.DelayedTopologyRequest = nil, nil
	after.TopologyAssignment, after.DelayedTopologyRequest = nil, nil
	if elastic && before.Count != nil && after.Count != nil && *after.Count <= *before.Count {
		after.Count, after.ResourceUsage = before.Count, before.ResourceUsage
	}
	return semantic.DeepEqual(before, after)
}

// validateReclaimablePods checks that reclaimable pods name PodSets and stay
// within their counts (entries the update leaves as they were are not
// checked again), and that while the reservation is held no count goes
// down and no entry goes away, except for a PodSet of an elastic Workload
// that shrank.
func validateReclaimablePods(oldWL, wl *kueue.Workload, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	counts := podSetCounts(wl)
	var before map[kueue.PodSetReference]int32
	if oldWL != nil {
		before = reclaimableByName(oldWL)
	}
	for i, rp := range wl.Status.ReclaimablePods {
		if c, ok := before[rp.Name]; ok && c == rp.Count {
			continue
		}
		p := path.Index(i)
		specCount, ok := counts[rp.Name]
		switch {
		case !ok:
			errs = append(errs, field.Invalid(p.Child("name"), rp.Name, "must name a PodSet of spec.podSets"))
		case rp.Count > specCount:
			errs = append(errs, field.Invalid(p.Child("count"), rp.Count,
				fmt.Sprintf("must not exceed the count of PodSet %q (%d)", rp.Name, specCount)))
		}
	}
	if oldWL == nil || !reserved(oldWL) || !reserved(wl) {
		return errs
	}
	return append(errs, validateReclaimableKept(oldWL, wl, before, path)...)
}

// validateReclaimableKept forbids lowering reclaimable counts while the
// reservation is held.
func validateReclaimableKept(oldWL, wl *kueue.Workload, before map[kueue.PodSetReference]int32, path *field.Path) field.ErrorList {
	const why = "cannot go down while the workload holds a quota reservation"
	var errs field.ErrorList
	oldCounts, newCounts := podSetCounts(oldWL), podSetCounts(wl)
	after := reclaimableByName(wl)
	for _, name := range sortedKeys(before) {
		was, now := before[name], after[name]
		if now >= was || elastic(wl) && newCounts[name] < oldCounts[name] {
			continue
		}
		i := slices.IndexFunc(wl.Status.ReclaimablePods, func(p kueue.ReclaimablePod) bool { return p.Name == name })
		if i < 0 {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("the entry of PodSet %q (count %d) %s", name, was, why)))
			continue
		}
		errs = append(errs, field.Invalid(path.Index(i).Child("count"), now, fmt.Sprintf("%s (was %d)", why, was)))
	}
	return errs
}

func reclaimableByName(wl *kueue.Workload) map[kueue.PodSetReference]int32 {
	out := make(map[kueue.PodSetReference]int32, len(wl.Status.ReclaimablePods))
	for _, rp := range wl.Status.ReclaimablePods {
		out[rp.Name] = rp.Count
	}
	return out
}

// validateClusterName requires a clusterName, when first set, to be one of
// the nominated clusters, unless the Workload is an elastic slice that
// replaces another (it goes where the replaced slice runs).
func validateClusterName(oldWL, wl *kueue.Workload, path *field.Path) field.ErrorList {
	name := wl.Status.ClusterName
	if oldWL.Status.ClusterName != nil || name == nil || wl.Annotations[sliceReplacementAnnotation] != "" {
		return nil
	}
	nominated := oldWL.Status.NominatedClusterNames
	if slices.Contains(nominated, *name) {
		return nil
	}
	if len(nominated) == 0 {
		return field.ErrorList{field.Invalid(path, *name, "can only be set to one of status.nominatedClusterNames, and none were nominated")}
	}
	return field.ErrorList{field.NotSupported(path, *name, nominated)}
}
