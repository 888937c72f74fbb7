package lifecycle

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/state"
	"github.com/kuota-dev/kuota/internal/tas"
)

// NodeGrace is how long a pod stays on a node the node controller tainted
// not-ready or unreachable when its own tolerations say nothing about it
// (Kubernetes' DefaultTolerationSeconds).
const NodeGrace = 300 * time.Second

// NodeCheck is what the lifecycle reads of one node a workload's topology
// assignment places pods on.
type NodeCheck struct {
	// Node is the node as the manager knows it, nil when it is gone.
	Node *state.Node
	// Tolerations are those of the PodSets placed there, with their
	// flavors'.
	Tolerations []corev1.Toleration
}

// AssignedNodes lists, per node, the PodSets an admission places there by
// topology (assignments at the hostname level only).
func AssignedNodes(adm *kueue.Admission) map[string][]kueue.PodSetReference {
	if adm == nil {
		return nil
	}
	var out map[string][]kueue.PodSetReference
	for _, psa := range adm.PodSetAssignments {
		for _, node := range tas.Nodes(psa.TopologyAssignment) {
			if out == nil {
				out = map[string][]kueue.PodSetReference{}
			}
			if !slices.Contains(out[node], psa.Name) {
				out[node] = append(out[node], psa.Name)
			}
		}
	}
	return out
}

// nodeFailures returns the eviction of an admitted workload whose pods were
// placed on a node that failed (first a replacement of the node, with
// opts.ReplaceFailedNodes): the node is gone, or tainted NoExecute in a
// way its pods do not tolerate (for the node controller's not-ready and
// unreachable taints, once NodeGrace has passed since the taint). It also
// says when to look again (0: no need).
func nodeFailures(v *View, opts *Options, now time.Time) (Step, time.Duration) {
	var failed, why []string
	var recheck time.Duration
	for _, name := range slices.Sorted(maps.Keys(v.Nodes)) {
		nc := v.Nodes[name]
		if nc.Node == nil {
			failed, why = append(failed, name), append(why, fmt.Sprintf("node %s is gone", name))
			continue
		}
		for i := range nc.Node.Taints {
			t := &nc.Node.Taints[i]
			if t.Effect != corev1.TaintEffectNoExecute ||
				slices.ContainsFunc(nc.Tolerations, func(tol corev1.Toleration) bool { return state.Tolerates(&tol, t) }) {
				continue
			}
			if left := graceLeft(t, now); left > 0 {
				recheck = minPositive(recheck, left)
				continue
			}
			failed, why = append(failed, name), append(why, fmt.Sprintf("node %s has the taint %s:%s", name, t.Key, t.Effect))
			break
		}
	}
	if len(failed) == 0 {
		return Step{}, recheck
	}
	action := Evict
	if opts.ReplaceFailedNodes {
		action = ReplaceNodes
	}
	return Step{Action: action, Reason: kueue.WorkloadEvictedByNodeFailures, Nodes: failed,
		Message: "Pods of the workload were placed on failed nodes: " + strings.Join(why, "; ")}, 0
}

// graceLeft is what remains of NodeGrace for the node controller's
// not-ready and unreachable taints (0 for other taints: they evict now).
func graceLeft(t *corev1.Taint, now time.Time) time.Duration {
	if t.Key != corev1.TaintNodeNotReady && t.Key != corev1.TaintNodeUnreachable {
		return 0
	}
	if t.TimeAdded == nil {
		return NodeGrace
	}
	return max(0, t.TimeAdded.Add(NodeGrace).Sub(now))
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
