package flavors

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/workload"
)

// eligible reports whether a PodSet may use a flavor: the flavor's node
// labels must agree with the PodSet's node selector and required node
// affinity (only for keys the flavor defines), and the PodSet (or the flavor
// itself) must tolerate the flavor's NoSchedule and NoExecute taints; a
// PodSet with a topology request needs a flavor with a topology. When not
// eligible it says why.
func eligible(ps *workload.PodSetShape, f *state.Flavor) (bool, string) {
	if ps.Topology != nil && f.TopologyName == "" {
		return false, fmt.Sprintf("flavor %s has no topology, the pod set asks for topology-aware placement", f.Name)
	}
	for key, want := range ps.NodeSelector {
		if have, ok := f.NodeLabels[key]; ok && have != want {
			return false, fmt.Sprintf("flavor %s doesn't match node selector %s=%s", f.Name, key, want)
		}
	}
	if ps.RequiredAffinity != nil && !affinityMatches(ps.RequiredAffinity, f.NodeLabels) {
		return false, fmt.Sprintf("flavor %s doesn't match the required node affinity", f.Name)
	}
	for i := range f.NodeTaints {
		taint := &f.NodeTaints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerated(taint, ps.Tolerations) && !tolerated(taint, f.Tolerations) {
			return false, fmt.Sprintf("untolerated taint %s in flavor %s", taint.ToString(), f.Name)
		}
	}
	return true, ""
}

func tolerated(taint *corev1.Taint, tolerations []corev1.Toleration) bool {
	for i := range tolerations {
		if state.Tolerates(&tolerations[i], taint) {
			return true
		}
	}
	return false
}

// affinityMatches evaluates required node affinity against a flavor's
// labels, ignoring expressions on keys the flavor does not define. Terms are
// ORed; expressions within a term are ANDed.
func affinityMatches(ns *corev1.NodeSelector, flavorLabels map[string]string) bool {
	if len(ns.NodeSelectorTerms) == 0 {
		return true
	}
	set := labels.Set(flavorLabels)
	for _, term := range ns.NodeSelectorTerms {
		if termMatches(term, set, false) {
			return true
		}
	}
	return false
}

// NodeMatches reports whether a node with these labels may run the
// PodSet's pods: its node selector and required node affinity hold for
// every key (a key the node lacks fails In and Exists), as the
// kube-scheduler evaluates them. Topology-aware placement uses it to keep
// a PodSet's pods on the nodes they can run on.
func NodeMatches(ps *workload.PodSetShape, nodeLabels map[string]string) bool {
	for key, want := range ps.NodeSelector {
		if have, ok := nodeLabels[key]; !ok || have != want {
			return false
		}
	}
	ns := ps.RequiredAffinity
	if ns == nil || len(ns.NodeSelectorTerms) == 0 {
		return true
	}
	set := labels.Set(nodeLabels)
	for _, term := range ns.NodeSelectorTerms {
		if len(term.MatchExpressions) > 0 && termMatches(term, set, true) {
			return true
		}
	}
	return false
}

// NarrowsNodes reports whether the PodSet's own node selector or required
// node affinity may exclude some of a flavor's nodes.
func NarrowsNodes(ps *workload.PodSetShape) bool {
	return len(ps.NodeSelector) > 0 || (ps.RequiredAffinity != nil && len(ps.RequiredAffinity.NodeSelectorTerms) > 0)
}

// termMatches evaluates a term's expressions; unless strict, expressions
// on keys the labels do not define are ignored (flavors define only some
// of their nodes' labels).
func termMatches(term corev1.NodeSelectorTerm, set labels.Set, strict bool) bool {
	for _, expr := range term.MatchExpressions {
		if _, defined := set[expr.Key]; !defined && !strict {
			continue
		}
		op, ok := operators[expr.Operator]
		if !ok {
			return false
		}
		req, err := labels.NewRequirement(expr.Key, op, expr.Values)
		if err != nil || !req.Matches(set) {
			return false
		}
	}
	return true
}

var operators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}
