package devcluster

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseLabels parses "key=value" items (as given to --node-labels) into a
// map. Keys and values are validated as Kubernetes label keys and values; a
// key given twice with different values is an error.
func ParseLabels(items []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("invalid label %q: want key=value", item)
		}
		if err := validateLabel(key, value); err != nil {
			return nil, err
		}
		if old, dup := labels[key]; dup && old != value {
			return nil, fmt.Errorf("label %q is given twice, as %q and %q", key, old, value)
		}
		labels[key] = value
	}
	return labels, nil
}

// ParseResources parses "name=quantity" items, for example
// "cpu=64,memory=512Gi,nvidia.com/gpu=8,pods=110", into a ResourceList.
func ParseResources(list string) (corev1.ResourceList, error) {
	resources := corev1.ResourceList{}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("invalid resource %q: want name=quantity, e.g. cpu=64", item)
		}
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("invalid quantity %q for resource %q: %w", value, name, err)
		}
		rn := corev1.ResourceName(name)
		if err := validateResource(rn, q); err != nil {
			return nil, err
		}
		if _, dup := resources[rn]; dup {
			return nil, fmt.Errorf("resource %q is given twice", name)
		}
		resources[rn] = q
	}
	return resources, nil
}

// ParseNodeGroup parses a --node-group value:
//
//	NAME:COUNT[:LABELS[:RESOURCES]]
//
// LABELS is a comma-separated list of key=value node labels and RESOURCES a
// comma-separated list of name=quantity that overrides the per-node capacity,
// for example "gpu:2:accelerator=a100:cpu=64,nvidia.com/gpu=8". Either list
// may be empty ("big:1::cpu=128"). Label keys and values cannot contain ':',
// so the split is unambiguous.
func ParseNodeGroup(spec string) (NodeGroup, error) {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 4 {
		return NodeGroup{}, fmt.Errorf("invalid node group %q: want NAME:COUNT[:LABELS[:RESOURCES]], e.g. gpu:2:accelerator=a100:nvidia.com/gpu=8", spec)
	}
	g := NodeGroup{Name: parts[0]}
	if msgs := isDNSLabel(g.Name); len(msgs) > 0 {
		return NodeGroup{}, fmt.Errorf("invalid node group %q: name %q: %s", spec, g.Name, strings.Join(msgs, "; "))
	}
	count, err := strconv.Atoi(parts[1])
	if err != nil || count < 1 {
		return NodeGroup{}, fmt.Errorf("invalid node group %q: count %q must be a positive integer", spec, parts[1])
	}
	g.Count = count
	if len(parts) > 2 {
		if g.Labels, err = ParseLabels(strings.Split(parts[2], ",")); err != nil {
			return NodeGroup{}, fmt.Errorf("invalid node group %q: %w", spec, err)
		}
	}
	if len(parts) > 3 {
		if g.Resources, err = ParseResources(parts[3]); err != nil {
			return NodeGroup{}, fmt.Errorf("invalid node group %q: %w", spec, err)
		}
	}
	return g, nil
}

func validateLabel(key, value string) error {
	if msgs := content.IsLabelKey(key); len(msgs) > 0 {
		return fmt.Errorf("invalid label key %q: %s", key, strings.Join(msgs, "; "))
	}
	if msgs := content.IsLabelValue(value); len(msgs) > 0 {
		return fmt.Errorf("invalid value %q for label %q: %s", value, key, strings.Join(msgs, "; "))
	}
	return nil
}

// validateLabels checks a label map in a stable (sorted) order.
func validateLabels(labels map[string]string) error {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		if err := validateLabel(k, labels[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func validateResource(name corev1.ResourceName, q resource.Quantity) error {
	if msgs := content.IsLabelKey(string(name)); len(msgs) > 0 {
		return fmt.Errorf("invalid resource name %q: %s", name, strings.Join(msgs, "; "))
	}
	if q.Sign() < 0 {
		return fmt.Errorf("invalid quantity %q for resource %q: must not be negative", q.String(), name)
	}
	return nil
}

func isDNSLabel(name string) []string {
	if name == "" {
		return []string{"must not be empty"}
	}
	return validation.IsDNS1123Label(name)
}
