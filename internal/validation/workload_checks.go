package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// validateCheckPodSetUpdates checks the podSetUpdates of admission checks
// that the update sets or changes: they cannot change while a check stays
// Ready, and otherwise must name PodSets and hold valid labels,
// annotations, node selectors and tolerations.
func validateCheckPodSetUpdates(oldWL, wl *kueue.Workload, path *field.Path) field.ErrorList {
	before := map[kueue.AdmissionCheckReference]*kueue.AdmissionCheckState{}
	if oldWL != nil {
		for i := range oldWL.Status.AdmissionChecks {
			before[oldWL.Status.AdmissionChecks[i].Name] = &oldWL.Status.AdmissionChecks[i]
		}
	}
	counts := podSetCounts(wl)
	var errs field.ErrorList
	for i := range wl.Status.AdmissionChecks {
		check := &wl.Status.AdmissionChecks[i]
		p := path.Index(i).Child("podSetUpdates")
		prev := before[check.Name]
		if prev != nil && semantic.DeepEqual(prev.PodSetUpdates, check.PodSetUpdates) {
			continue
		}
		if prev != nil && prev.State == kueue.CheckStateReady && check.State == kueue.CheckStateReady {
			errs = append(errs, field.Forbidden(p, "cannot change while the check stays Ready"))
			continue
		}
		for j := range check.PodSetUpdates {
			errs = append(errs, validatePodSetUpdate(&check.PodSetUpdates[j], counts, p.Index(j))...)
		}
	}
	return errs
}

func validatePodSetUpdate(u *kueue.PodSetUpdate, counts map[kueue.PodSetReference]int32, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, ok := counts[u.Name]; !ok {
		errs = append(errs, field.Invalid(path.Child("name"), u.Name, "must name a PodSet of spec.podSets"))
	}
	errs = append(errs, validateLabelMap(u.Labels, path.Child("labels"))...)
	errs = append(errs, apivalidation.ValidateAnnotations(u.Annotations, path.Child("annotations"))...)
	errs = append(errs, validateLabelMap(u.NodeSelector, path.Child("nodeSelector"))...)
	return append(errs, validateTolerations(u.Tolerations, path.Child("tolerations"))...)
}
