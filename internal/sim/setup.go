package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ReadSetup reads a queue configuration: a YAML (or JSON) stream of
// Kueue's ResourceFlavors, Cohorts, ClusterQueues, LocalQueues,
// WorkloadPriorityClasses and Topologies, Namespaces (for their labels),
// and Nodes (labels, taints, status.allocatable and the Ready condition:
// the capacity of topology-aware flavors), as a cluster admin applies
// them. Other kinds are an error.
func ReadSetup(r io.Reader) (*Setup, error) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	decode := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	s := &Setup{Namespaces: map[string]map[string]string{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for n := 1; ; n++ {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
			continue
		}
		obj, gvk, err := decode.Decode(raw.Raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		switch o := obj.(type) {
		case *kueue.ResourceFlavor:
			s.Flavors = append(s.Flavors, o)
		case *kueue.Cohort:
			s.Cohorts = append(s.Cohorts, o)
		case *kueue.ClusterQueue:
			s.ClusterQueues = append(s.ClusterQueues, o)
		case *kueue.LocalQueue:
			if o.Namespace == "" {
				return nil, fmt.Errorf("document %d: LocalQueue %s has no namespace", n, o.Name)
			}
			s.LocalQueues = append(s.LocalQueues, o)
		case *kueue.WorkloadPriorityClass:
			s.Priorities = append(s.Priorities, o)
		case *corev1.Namespace:
			s.Namespaces[o.Name] = o.Labels
		case *kueue.Topology:
			if len(o.Spec.Levels) == 0 {
				return nil, fmt.Errorf("document %d: Topology %s has no levels", n, o.Name)
			}
			s.Topologies = append(s.Topologies, o)
		case *corev1.Node:
			if err := checkNode(o); err != nil {
				return nil, fmt.Errorf("document %d: %w", n, err)
			}
			s.Nodes = append(s.Nodes, o)
		default:
			return nil, fmt.Errorf("document %d: %s is not a queue kind a simulation uses", n, gvk.Kind)
		}
	}
	if len(s.ClusterQueues) == 0 {
		return nil, errors.New("the queue configuration has no ClusterQueue")
	}
	return s, nil
}

// WriteSetup writes a queue configuration as ReadSetup reads it: a YAML
// stream of its objects with their kinds, and a Namespace for each
// namespace with labels. The objects are written as they are (status
// included when set).
func WriteSetup(w io.Writer, s *Setup) error {
	var objs []runtime.Object
	add := func(o runtime.Object, kind string) {
		o = o.DeepCopyObject()
		o.GetObjectKind().SetGroupVersionKind(kueue.GroupVersion.WithKind(kind))
		objs = append(objs, o)
	}
	for _, o := range s.Flavors {
		add(o, "ResourceFlavor")
	}
	for _, o := range s.Cohorts {
		add(o, "Cohort")
	}
	for _, o := range s.ClusterQueues {
		add(o, "ClusterQueue")
	}
	for _, o := range s.LocalQueues {
		add(o, "LocalQueue")
	}
	for _, o := range s.Priorities {
		add(o, "WorkloadPriorityClass")
	}
	for _, o := range s.Topologies {
		add(o, "Topology")
	}
	for _, name := range slices.Sorted(maps.Keys(s.Namespaces)) {
		if labels := s.Namespaces[name]; len(labels) > 0 {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
			ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
			objs = append(objs, ns)
		}
	}
	for _, o := range s.Nodes {
		n := o.DeepCopy()
		n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
		objs = append(objs, n)
	}
	for _, o := range objs {
		data, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("writing the queue configuration: %w", err)
		}
		if _, err := fmt.Fprintf(w, "---\n%s", data); err != nil {
			return fmt.Errorf("writing the queue configuration: %w", err)
		}
	}
	return nil
}

// checkNode rejects a node a simulation would silently give no capacity:
// one without a name, allocatable resources or a Ready condition (a node
// whose Ready condition is not True is kept: it takes no pods, as live).
func checkNode(n *corev1.Node) error {
	switch {
	case n.Name == "":
		return errors.New("a Node without a name")
	case len(n.Status.Allocatable) == 0:
		return fmt.Errorf("node %s: no status.allocatable", n.Name)
	case !slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }):
		return fmt.Errorf("node %s: no Ready condition in status.conditions (a node takes pods only when Ready is True)", n.Name)
	}
	return nil
}
