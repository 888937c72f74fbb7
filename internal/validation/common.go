package validation

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// minPositiveWeight is the smallest fair-sharing weight above zero (1n).
var minPositiveWeight = resource.MustParse("1n")

// semantic is apimachinery's semantic equality with a quantity comparison
// that stays cheap on quantities of wildly different magnitudes.
var semantic = conversion.EqualitiesOrDie(
	func(a, b resource.Quantity) bool { return compareQuantities(a, b) == 0 },
	func(a, b metav1.MicroTime) bool { return a.UTC() == b.UTC() },
	func(a, b metav1.Time) bool { return a.UTC() == b.UTC() },
)

// sortedKeys returns the keys of a map in order, so that errors come out in
// a stable order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// validateLabelMap checks a map used as node labels, pod labels or a node
// selector: keys must be qualified names and values valid label values.
func validateLabelMap(m map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(m) {
		errs = append(errs, validateLabelKey(k, path.Key(k))...)
		errs = append(errs, validateLabelValue(m[k], path.Key(k))...)
	}
	return errs
}

func validateLabelKey(key string, path *field.Path) field.ErrorList {
	if msgs := utilvalidation.IsQualifiedName(key); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, key, "not a valid label key: "+strings.Join(msgs, "; "))}
	}
	return nil
}

func validateLabelValue(value string, path *field.Path) field.ErrorList {
	if msgs := utilvalidation.IsValidLabelValue(value); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, value, "not a valid label value: "+strings.Join(msgs, "; "))}
	}
	return nil
}

// validateTolerations checks what the Tolerations CEL rules leave out: a
// key, when given, is a qualified name, and the value of an Equal toleration
// is a valid label value.
func validateTolerations(tols []corev1.Toleration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tols {
		p := path.Index(i)
		if t.Key != "" {
			errs = append(errs, validateLabelKey(t.Key, p.Child("key"))...)
		}
		if t.Operator == corev1.TolerationOpEqual || t.Operator == "" {
			errs = append(errs, validateLabelValue(t.Value, p.Child("value"))...)
		}
	}
	return errs
}

// validateFairSharing checks a fair-sharing weight: not negative, and when
// above zero at least 1n, the smallest step the fair-sharing arithmetic
// tells apart from zero.
func validateFairSharing(fs *kueue.FairSharing, path *field.Path) field.ErrorList {
	if fs == nil || fs.Weight == nil {
		return nil
	}
	w := fs.Weight
	p := path.Child("weight")
	if errs := validateMagnitude(*w, p); len(errs) > 0 {
		return errs
	}
	switch {
	case w.Sign() < 0:
		return field.ErrorList{field.Invalid(p, w.String(), "must not be negative")}
	case w.Sign() > 0 && compareQuantities(*w, minPositiveWeight) < 0:
		return field.ErrorList{field.Invalid(p, w.String(), "must be 0 or at least 1n (0.000000001)")}
	}
	return nil
}

// conditionTrue reports whether the condition of that type is True.
func conditionTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}
