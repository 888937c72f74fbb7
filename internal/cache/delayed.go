package cache

import (
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/workload"
)

// PlaceDelayed is the second pass of a workload whose topology placement
// waited for its ProvisioningRequest check (scheduling.PlaceDelayed): it
// places the waiting PodSets on the nodes known now, narrowed by the Ready
// checks' podSetUpdates, and returns the admission to write, assumed at
// once so that no other placement takes the same room meanwhile (if the
// write fails, Refresh undoes it). Without room it says why. local is
// false when the ClusterQueue leaves placement to a MultiKueue worker:
// nothing is placed here.
func (c *Cache) PlaceDelayed(key Key) (adm *kueue.Admission, why string, local bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, holds := c.state.Admitted(key)
	r := c.records[key]
	if !holds || r == nil || r.obj.Status.Admission == nil {
		return nil, "the workload holds no quota", true
	}
	cq, known := c.state.ClusterQueue(a.ClusterQueue)
	if !known {
		return nil, "its ClusterQueue is not known", true
	}
	if c.state.DefersTopology(cq) {
		return nil, "", false // before the snapshot: MultiKueue workloads come here often
	}
	snap := c.state.Snapshot()
	var updates []kueue.PodSetUpdate
	for _, ac := range r.obj.Status.AdmissionChecks {
		if ac.State == kueue.CheckStateReady {
			updates = append(updates, ac.PodSetUpdates...)
		}
	}
	w := &workload.Info{Key: key, UID: r.obj.UID, ClusterQueue: a.ClusterQueue,
		Shape: workload.ShapeFromPodSets(r.obj.Spec.PodSets, c.opts.Shape())}
	adm, why = scheduling.PlaceDelayed(snap, w, r.obj.Status.Admission, updates)
	if adm == nil {
		return nil, why, true
	}
	cp := *a
	cp.Topology = lifecycle.TopologyUses(adm)
	_ = c.state.Replace(&cp)
	c.notify()
	return adm, "", true
}
