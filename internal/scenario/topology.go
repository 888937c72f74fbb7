package scenario

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Topology is the node topology of a topology-aware scenario: levels from
// the widest (e.g. blocks) to the nodes, each with a count per domain of
// the level above and the node label naming it; the last level gives each
// node's capacity.
type Topology struct {
	Name   string          `json:"name"`
	Levels []TopologyLevel `json:"levels"`
}

// TopologyLevel is one level of a Topology.
type TopologyLevel struct {
	Name      string   `json:"name"`
	Count     int      `json:"count"`
	NodeLabel string   `json:"nodeLabel"`
	Capacity  Capacity `json:"capacity,omitempty"`
}

// Capacity is what each node of the lowest level offers.
type Capacity struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// ResourceFlavor is the flavor of a topology-aware scenario: its name,
// the node label selecting its nodes and the Topology it follows.
type ResourceFlavor struct {
	Name         string `json:"name"`
	NodeLabel    string `json:"nodeLabel,omitempty"`
	TopologyName string `json:"topologyName,omitempty"`
}

// tasConstraints are the values of a template's tasConstraint.
var tasConstraints = map[string]bool{"": true, "required": true, "preferred": true, "balanced": true}

func (t *Topology) validate() []error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.Name == "" || len(t.Levels) == 0 {
		errs = append(errs, fmt.Errorf("topology: a name and at least one level are required"))
	}
	seen := map[string]bool{}
	for i, l := range t.Levels {
		at := fmt.Sprintf("topology.levels[%d]", i)
		if l.NodeLabel == "" || l.Count < 1 {
			errs = append(errs, fmt.Errorf("%s: nodeLabel and a count >= 1 are required", at))
		}
		// The name makes the nodes' names and label values.
		if msgs := validation.IsDNS1123Label(l.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s.name: %q: %s", at, l.Name, strings.Join(msgs, "; ")))
		}
		if seen[l.NodeLabel] {
			errs = append(errs, fmt.Errorf("%s.nodeLabel: %q repeats an upper level's", at, l.NodeLabel))
		}
		seen[l.NodeLabel] = true
		if l.NodeLabel == corev1.LabelHostname && i != len(t.Levels)-1 {
			errs = append(errs, fmt.Errorf("%s.nodeLabel: %s may only be the lowest level", at, corev1.LabelHostname))
		}
		for field, v := range map[string]string{"cpu": l.Capacity.CPU, "memory": l.Capacity.Memory} {
			if v == "" {
				continue
			}
			if q, err := resource.ParseQuantity(v); err != nil || q.Sign() < 0 {
				errs = append(errs, fmt.Errorf("%s.capacity.%s: %q is not a quantity", at, field, v))
			}
		}
	}
	if t.nodeCount() > MaxNodes {
		errs = append(errs, fmt.Errorf("topology: the level counts make more than %d nodes", MaxNodes))
	}
	return errs
}

func (f *ResourceFlavor) validate() []error {
	if f == nil || f.Name != "" {
		return nil
	}
	return []error{fmt.Errorf("resourceFlavor.name is required")}
}

// validateTopologyFlavor checks that a topology goes with a flavor that
// follows it and selects its nodes (the flavor is created from both), and
// that a flavor follows no other topology.
func (c *Config) validateTopologyFlavor() []error {
	f, t := c.ResourceFlavor, c.Topology
	switch {
	case t == nil && f != nil && f.TopologyName != "":
		return []error{fmt.Errorf("resourceFlavor.topologyName: %q names no topology of the scenario", f.TopologyName)}
	case t == nil:
		return nil
	case f == nil || f.TopologyName != t.Name:
		return []error{fmt.Errorf("resourceFlavor: a topology scenario needs a resourceFlavor with topologyName %q", t.Name)}
	case f.NodeLabel == "":
		return []error{fmt.Errorf("resourceFlavor.nodeLabel: required with a topologyName (the nodes carry <nodeLabel>=%s)", FlavorNodeValue)}
	}
	return nil
}

// validateTopology checks a template's pod count and topology request.
func (t *Template) validateTopology(at string) []error {
	var errs []error
	if t.PodCount < 0 {
		errs = append(errs, fmt.Errorf("%s.podCount: must be >= 0 (0 means 1), got %d", at, t.PodCount))
	}
	if !tasConstraints[t.TASConstraint] {
		errs = append(errs, fmt.Errorf("%s.tasConstraint: %q is not one of required, preferred or balanced", at, t.TASConstraint))
	}
	if t.TASConstraint != "" && t.TASLevel == "" {
		errs = append(errs, fmt.Errorf("%s.tasLevel: required with tasConstraint %q", at, t.TASConstraint))
	}
	if t.SliceSize < 0 || (t.SliceSize > 0 && t.TASConstraint != "balanced") {
		errs = append(errs, fmt.Errorf("%s.sliceSize: a positive size goes with tasConstraint balanced, got %d", at, t.SliceSize))
	}
	return errs
}

// topologyRequest is the PodSet topology request of a template, as
// Kueue's generator writes it: required or preferred at the level, or
// (balanced) slices required at the level, of sliceSize pods when set.
func (t *Template) topologyRequest() *kueue.PodSetTopologyRequest {
	if t.TASLevel == "" {
		return nil
	}
	r := &kueue.PodSetTopologyRequest{}
	switch t.TASConstraint {
	case "required":
		r.Required = ptr.To(t.TASLevel)
	case "preferred":
		r.Preferred = ptr.To(t.TASLevel)
	case "balanced":
		r.PodSetSliceRequiredTopology = ptr.To(t.TASLevel)
		if t.SliceSize > 0 {
			r.PodSetSliceSize = ptr.To(t.SliceSize)
		}
	default:
		return nil
	}
	return r
}
