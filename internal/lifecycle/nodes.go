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
	// Pods counts the workload's pods bound to the node; nil while the
	// manager has not listed them.
	Pods *NodePods
}

// NodePods counts a workload's pods bound to one node: running (not ended
// and not being deleted), succeeded, and ended otherwise (failed or being
// deleted).
type NodePods struct {
	Running, Succeeded, Ended int
}

// podsGone reports whether none of the workload's pods runs on the node
// any longer and some ended there without succeeding (failed, or being
// deleted). A node with no pod of the workload at all is left to the
// taint rules: its pods may not have arrived yet (a node that misses a
// few heartbeats right after an admission does not cost the workload its
// place), or were force-deleted (the node controller's taints come).
// Pods that all succeeded need nothing.
func (p *NodePods) podsGone() bool {
	return p != nil && p.Running == 0 && p.Ended > 0
}

// AssignedNodes lists, per node, the PodSets an admission places there by
// topology (assignments at the hostname level only). nodesOf names the
// nodes of an assignment (State.AssignedNodes): its domains name hosts by
// their host name label, which is not always the node's name.
func AssignedNodes(adm *kueue.Admission, nodesOf func(*kueue.TopologyAssignment) []string) map[string][]kueue.PodSetReference {
	if adm == nil {
		return nil
	}
	var out map[string][]kueue.PodSetReference
	for _, psa := range adm.PodSetAssignments {
		for _, node := range nodesOf(psa.TopologyAssignment) {
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
// opts.ReplaceFailedNodes): the node is gone; or it is not ready and none
// of the workload's pods runs there any longer, some having failed or
// being deleted (Kueue's TASReplaceNodeOnPodTermination); or it has a
// NoExecute taint that evicts its pods, once their tolerations let it
// (see evictsAfter). It also says when to look again (0: no need).
func nodeFailures(v *View, opts *Options, now time.Time) (Step, time.Duration) {
	var failed, why []string
	var recheck time.Duration
	for _, name := range slices.Sorted(maps.Keys(v.Nodes)) {
		nc := v.Nodes[name]
		if nc.Node == nil {
			failed, why = append(failed, name), append(why, fmt.Sprintf("node %s is gone", name))
			continue
		}
		if !nc.Node.Ready && nc.Pods.podsGone() {
			failed, why = append(failed, name), append(why, fmt.Sprintf("node %s is not ready and none of the workload's pods runs there", name))
			continue
		}
		for i := range nc.Node.Taints {
			t := &nc.Node.Taints[i]
			if t.Effect != corev1.TaintEffectNoExecute {
				continue
			}
			after, evicts := evictsAfter(t, nc.Tolerations)
			if !evicts {
				continue
			}
			if left := timeLeft(t, after, now); left > 0 {
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

// evictsAfter says whether Kubernetes evicts pods with these tolerations
// from a node with the NoExecute taint t, and how long after the taint was
// added, as its taint manager does: at once without a matching
// toleration, never when the matching tolerations set no
// tolerationSeconds, else after the shortest they set. Pods that do not
// tolerate the node controller's not-ready and unreachable taints are
// given NodeGrace for them when created (the DefaultTolerationSeconds
// admission plugin).
func evictsAfter(t *corev1.Taint, tolerations []corev1.Toleration) (time.Duration, bool) {
	matched, bounded := false, false
	var shortest int64
	for i := range tolerations {
		tol := &tolerations[i]
		if !state.Tolerates(tol, t) {
			continue
		}
		matched = true
		if tol.TolerationSeconds != nil && (!bounded || *tol.TolerationSeconds < shortest) {
			bounded, shortest = true, *tol.TolerationSeconds
		}
	}
	switch {
	case !matched && (t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable):
		return NodeGrace, true
	case !matched:
		return 0, true
	case !bounded:
		return 0, false
	}
	return time.Duration(max(shortest, 0)) * time.Second, true
}

// timeLeft is what remains of after since the taint was added; a taint
// without a time (not the node controller's) counts from now when a
// delay applies, so that only an immediate eviction fails the node.
func timeLeft(t *corev1.Taint, after time.Duration, now time.Time) time.Duration {
	if after <= 0 {
		return 0
	}
	if t.TimeAdded == nil {
		return after
	}
	return max(0, t.TimeAdded.Add(after).Sub(now))
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}
