package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ValidateResourceFlavor checks a ResourceFlavor being created: node labels,
// node taints (valid key and value, unique by key and effect) and
// tolerations.
func ValidateResourceFlavor(rf *kueue.ResourceFlavor) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateLabelMap(rf.Spec.NodeLabels, spec.Child("nodeLabels"))
	errs = append(errs, validateTaints(rf.Spec.NodeTaints, spec.Child("nodeTaints"))...)
	errs = append(errs, validateTolerations(rf.Spec.Tolerations, spec.Child("tolerations"))...)
	return errs
}

// ValidateResourceFlavorUpdate checks an update of a ResourceFlavor. The spec
// is checked as on creation when it changes; topologyName immutability is a
// CEL rule.
func ValidateResourceFlavorUpdate(oldRF, newRF *kueue.ResourceFlavor) field.ErrorList {
	if semantic.DeepEqual(oldRF.Spec, newRF.Spec) {
		return nil
	}
	return ValidateResourceFlavor(newRF)
}

// validateTaints checks taint keys and values; the effect is checked by CEL.
func validateTaints(taints []corev1.Taint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	type keyEffect struct {
		key    string
		effect corev1.TaintEffect
	}
	seen := map[keyEffect]int{}
	for i, t := range taints {
		p := path.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), "a taint needs a key"))
		} else {
			errs = append(errs, validateLabelKey(t.Key, p.Child("key"))...)
		}
		errs = append(errs, validateLabelValue(t.Value, p.Child("value"))...)
		ke := keyEffect{t.Key, t.Effect}
		if first, dup := seen[ke]; dup {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("%s:%s (same key and effect as nodeTaints[%d])", t.Key, t.Effect, first)))
			continue
		}
		seen[ke] = i
	}
	return errs
}
