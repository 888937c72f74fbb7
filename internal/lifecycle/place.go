package lifecycle

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Placement is where a workload belongs in the manager's live picture.
type Placement int

const (
	// Gone workloads are out of the picture: finished, or deleted with no
	// job whose pods could still run. Their quota is free.
	Gone Placement = iota
	// Holding workloads hold the quota of their status.admission.
	Holding
	// Queued workloads wait in their ClusterQueue's queue.
	Queued
	// Aside workloads are pending but kept out of the queues until their
	// lifecycle moves on: inactive, malformed, their LocalQueue stopped,
	// not requeued yet after an eviction (Requeued=False), or asking for
	// pods the API server would refuse (CheckResources).
	Aside
)

func (p Placement) String() string {
	switch p {
	case Gone:
		return "Gone"
	case Holding:
		return "Holding"
	case Queued:
		return "Queued"
	case Aside:
		return "Aside"
	}
	return "Unknown"
}

// Place says where a workload belongs. It reads only the object and the
// view; the informer handlers feed the cache with it.
func Place(wl *kueue.Workload, v *View) Placement {
	switch {
	case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
		return Gone
	case !wl.DeletionTimestamp.IsZero() && len(wl.OwnerReferences) == 0:
		return Gone
	case CheckPodSets(wl) != nil:
		return Aside
	case Reserved(wl):
		return Holding
	case !Active(wl), deactivationPending(wl), stopped(v.LocalQueueStop), !wl.DeletionTimestamp.IsZero():
		// A workload being deleted (its job's pods may still be going) is
		// not admitted anew.
		return Aside
	}
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadRequeued); c != nil && c.Status == metav1.ConditionFalse {
		return Aside
	}
	if len(AdmissionGates(wl)) > 0 {
		// Held back until its gates are removed.
		return Aside
	}
	if CheckResources(wl, v.LimitRanges) != "" {
		// Its pods would be refused: admitting it would hold quota
		// for nothing.
		return Aside
	}
	if CheckClaims(wl, v.Claims) != "" {
		// Its devices could not be counted against any quota.
		return Aside
	}
	return Queued
}

// Reserved reports whether the workload holds a quota reservation.
func Reserved(wl *kueue.Workload) bool {
	return wl.Status.Admission != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

// Active reports spec.active (true when unset).
func Active(wl *kueue.Workload) bool { return wl.Spec.Active == nil || *wl.Spec.Active }

// deactivationPending reports a DeactivationTarget marker on an active
// workload.
func deactivationPending(wl *kueue.Workload) bool {
	return Active(wl) && meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadDeactivationTarget)
}
