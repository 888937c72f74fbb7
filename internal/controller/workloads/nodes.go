package workloads

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// ReasonNodesReplaced is the reason of the event on a Workload whose pods
// on failed nodes were given other nodes.
const ReasonNodesReplaced = "NodesReplaced"

// replaceNodes gives the pods a topology assignment placed on failed nodes
// other nodes of the same domain, keeping the workload admitted: its job
// recreates the lost pods, and the topology ungater sends them to their
// new nodes. When no node has room, the workload is evicted, the message
// saying why.
func (r *Reconciler) replaceNodes(ctx context.Context, wl *kueue.Workload, s lifecycle.Step) error {
	key := lifecycle.KeyOf(wl)
	adm, why := r.Cache.ReplaceNodes(key, s.Nodes)
	if adm == nil {
		s.Message += "; they cannot be replaced: " + why
		return r.evict(ctx, wl, s)
	}
	st := apply.AdmissionStatus(wl)
	st.Admission = adm
	st.UnhealthyNodes = nil
	if err := r.write(ctx, wl, st); err != nil {
		r.Cache.Refresh(key)
		return err
	}
	r.Recorder.Eventf(wl, corev1.EventTypeNormal, ReasonNodesReplaced,
		"The pods placed on the failed nodes %s get other nodes of their topology domain", strings.Join(s.Nodes, ", "))
	return nil
}
