package kubectl

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Parsing of create resourceflavor's --node-taints (KEY[=VALUE]:EFFECT) and
// --tolerations (KEY[=VALUE][:EFFECT] or :EFFECT).

// taintParts splits KEY[=VALUE][:EFFECT].
func taintParts(s string) (key, value, effect string, ok bool) {
	kv, effect, _ := strings.Cut(s, ":")
	if strings.Contains(effect, ":") {
		return "", "", "", false
	}
	key, value, _ = strings.Cut(kv, "=")
	if strings.Contains(value, "=") {
		return "", "", "", false
	}
	return key, value, effect, true
}

func checkEffect(flag, spec, effect string) error {
	switch corev1.TaintEffect(effect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return fmt.Errorf("invalid --%s value %q: effect %q must be NoSchedule or NoExecute", flag, spec, effect)
}

func checkKeyValue(flag, spec, key, value string) error {
	if key != "" {
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return fmt.Errorf("invalid --%s value %q: key: %s", flag, spec, strings.Join(errs, "; "))
		}
	}
	if value != "" {
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return fmt.Errorf("invalid --%s value %q: value: %s", flag, spec, strings.Join(errs, "; "))
		}
	}
	return nil
}

func parseTaints(specs []string) ([]corev1.Taint, error) {
	var out []corev1.Taint
	seen := map[string]bool{}
	for _, spec := range specs {
		key, value, effect, ok := taintParts(spec)
		if !ok || key == "" || effect == "" {
			return nil, fmt.Errorf("invalid --node-taints value %q: want KEY[=VALUE]:EFFECT", spec)
		}
		if err := checkEffect("node-taints", spec, effect); err != nil {
			return nil, err
		}
		if err := checkKeyValue("node-taints", spec, key, value); err != nil {
			return nil, err
		}
		if seen[key+":"+effect] {
			return nil, fmt.Errorf("invalid --node-taints: two taints with key %s and effect %s", key, effect)
		}
		seen[key+":"+effect] = true
		out = append(out, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	return out, nil
}

func parseTolerations(specs []string) ([]corev1.Toleration, error) {
	var out []corev1.Toleration
	for _, spec := range specs {
		key, value, effect, ok := taintParts(spec)
		if !ok || spec == "" || (key == "" && value != "") {
			return nil, fmt.Errorf("invalid --tolerations value %q: want KEY[=VALUE][:EFFECT] or :EFFECT", spec)
		}
		if effect != "" {
			if err := checkEffect("tolerations", spec, effect); err != nil {
				return nil, err
			}
		}
		if err := checkKeyValue("tolerations", spec, key, value); err != nil {
			return nil, err
		}
		t := corev1.Toleration{Key: key, Value: value, Effect: corev1.TaintEffect(effect), Operator: corev1.TolerationOpEqual}
		if key == "" || value == "" {
			t.Operator = corev1.TolerationOpExists
		}
		out = append(out, t)
	}
	return out, nil
}
