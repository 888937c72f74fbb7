package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Annotations of a Workload that the checks read (the keys Kueue uses).
const (
	// elasticJobAnnotation set to "true" makes the Workload elastic: its
	// PodSets may shrink in place while it holds quota.
	elasticJobAnnotation = "kueue.x-k8s.io/elastic-job"
	// sliceReplacementAnnotation marks an elastic Workload slice that
	// replaces an older one.
	sliceReplacementAnnotation = "kueue.x-k8s.io/workload-slice-replacement-for"
	// admissionGatedByAnnotation lists gates that hold back the quota
	// reservation until they are removed.
	admissionGatedByAnnotation = kueue.AdmissionGatedByAnnotation
)

// ValidateWorkload checks a Workload being created: its PodSets and, when
// given, its status. (The API server drops the status of a created
// Workload; it is checked for callers that validate stored objects.)
func ValidateWorkload(wl *kueue.Workload) field.ErrorList {
	errs := validatePodSets(wl, field.NewPath("spec", "podSets"))
	return append(errs, validateWorkloadStatus(nil, wl)...)
}

// ValidateWorkloadUpdate checks an update of a Workload, spec or status.
// Each rule looks only at what the update changes (see the package
// comment), so the manager's status writes, which carry over everything
// they do not change, are judged by what they change.
func ValidateWorkloadUpdate(oldWL, newWL *kueue.Workload) field.ErrorList {
	var errs field.ErrorList
	podSets := field.NewPath("spec", "podSets")
	if !semantic.DeepEqual(oldWL.Spec.PodSets, newWL.Spec.PodSets) {
		errs = append(errs, validatePodSets(newWL, podSets)...)
		if reserved(oldWL) && reserved(newWL) {
			errs = append(errs, validatePodSetsUnchanged(oldWL, newWL, podSets)...)
		}
	}
	errs = append(errs, validateAdmissionGatesUpdate(oldWL, newWL)...)
	return append(errs, validateWorkloadStatus(oldWL, newWL)...)
}

// reserved reports whether the Workload holds a quota reservation
// (QuotaReserved=True).
func reserved(wl *kueue.Workload) bool {
	return conditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

// elastic reports whether the Workload may shrink in place.
func elastic(wl *kueue.Workload) bool {
	return wl.Annotations[elasticJobAnnotation] == "true"
}

// podSetCounts maps PodSet names to their counts.
func podSetCounts(wl *kueue.Workload) map[kueue.PodSetReference]int32 {
	out := make(map[kueue.PodSetReference]int32, len(wl.Spec.PodSets))
	for _, ps := range wl.Spec.PodSets {
		out[ps.Name] = ps.Count
	}
	return out
}
