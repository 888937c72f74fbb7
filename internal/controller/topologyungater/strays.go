package topologyungater

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/tas"
)

// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch

// What a stray pod is marked with (the identifiers Kueue uses).
const (
	// ConditionTerminatedByKueue is the pod condition a stray pod is
	// failed with.
	ConditionTerminatedByKueue = "TerminatedByKueue"
	// ReasonUnschedulableOnAssignedNode is that condition's reason.
	ReasonUnschedulableOnAssignedNode = "UnschedulableOnAssignedNode"
	// ReasonPodTerminated (Normal, on the pod) reports a stray pod failed.
	ReasonPodTerminated = "PodTerminatedByKueue"
)

// strays returns the pods that were given a domain the topology assignment
// no longer has: the assignment moved the pods of a failed node elsewhere
// (cache.ReplaceNodes) after these were sent there, and their node
// selector cannot change now that they are ungated. Such a pod can never
// run, or runs on a node that failed; failing it lets its job make a new
// one, which the ungater sends to the new domain.
func strays(levels []string, domains []tas.Domain, pods []corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if !p.DeletionTimestamp.IsZero() || jobframework.IsTerminal(p) || jobframework.HasTopologyGate(p) {
			continue
		}
		values := make([]string, len(levels))
		named := true
		for l, level := range levels {
			v, ok := p.Spec.NodeSelector[level]
			if !ok {
				named = false
				break
			}
			values[l] = v
		}
		if named && !slices.ContainsFunc(domains, func(d tas.Domain) bool { return slices.Equal(d.Values, values) }) {
			out = append(out, p)
		}
	}
	return out
}

// errStrayChanged says a stray pod changed before it could be failed: the
// pass is done again shortly, on the pod as it is then (it may be ending
// anyway; the pod watch does not bring ungated pods back).
var errStrayChanged = errors.New("a stray pod changed meanwhile")

// failStray marks a stray pod Failed with the TerminatedByKueue
// condition, guarded by its resourceVersion; a pod gone meanwhile is
// left alone, one that changed gives errStrayChanged.
func (r *Reconciler) failStray(ctx context.Context, p *corev1.Pod, levels []string) error {
	orig := p.DeepCopy()
	var where []string
	for _, level := range levels {
		where = append(where, level+"="+p.Spec.NodeSelector[level])
	}
	msg := fmt.Sprintf("The pod was sent to %s, which the workload's topology assignment no longer has (a failed node was replaced)",
		strings.Join(where, ","))
	p.Status.Phase = corev1.PodFailed
	p.Status.Conditions = []corev1.PodCondition{{Type: ConditionTerminatedByKueue, Status: corev1.ConditionTrue,
		Reason: ReasonUnschedulableOnAssignedNode, Message: msg, LastTransitionTime: metav1.Now()}}
	patch := client.StrategicMergeFrom(orig, client.MergeFromWithOptimisticLock{})
	if err := r.Client.Status().Patch(ctx, p, patch); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			return errStrayChanged
		}
		return fmt.Errorf("failing the stray pod %s: %w", p.Name, err)
	}
	r.Recorder.Event(p, corev1.EventTypeNormal, ReasonPodTerminated, msg)
	return nil
}
