// Package multikueue decides MultiKueue (AdmissionCheck controllerName
// kueue.x-k8s.io/multikueue): a workload holding a quota reservation in the
// manager cluster is copied to every usable worker cluster; the first
// worker that reserves quota for its copy gets the workload (its
// clusterName), the other copies are deleted, the job is created there, and
// the check turns Ready. It is pure: internal/controller/multikueue reads
// the local and remote objects, calls Decide, and makes the writes.
package multikueue

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// ControllerName is the controllerName of MultiKueue checks.
const ControllerName = kueue.MultiKueueControllerName

// Remote is what a worker cluster holds of one workload.
type Remote struct {
	// Workload is the worker's copy, nil when there is none.
	Workload *kueue.Workload
	// Job says whether the job was created in the worker.
	Job bool
}

// Input is what Decide reads for one workload.
type Input struct {
	// Workload is the manager's workload.
	Workload *kueue.Workload
	// Check is the workload's MultiKueue check.
	Check kueue.AdmissionCheckReference
	// Clusters are the check's worker clusters that are connected, in the
	// MultiKueueConfig's order.
	Clusters []string
	// Remotes is what each connected worker of the check (and the one
	// the workload was given to) holds.
	Remotes map[string]Remote
	// LostSince says since when a worker the workload runs on has been
	// unreachable; zero when it is connected.
	LostSince time.Time
	// WorkerLostTimeout is how long a workload waits for its lost worker
	// before it is evicted and queued again.
	WorkerLostTimeout time.Duration
	// Dispatch says which clusters get copies; the zero value copies to
	// all at once.
	Dispatch Dispatch
	Now      time.Time
}

// Dispatch is how copies are spread over the workers.
type Dispatch struct {
	// Incremental nominates Step clusters more (in the config's order)
	// every Round since the workload reserved quota, instead of all at
	// once.
	Incremental bool
	Step        int
	Round       time.Duration
	// Alphabetical makes the incremental dispatcher take the clusters in
	// alphabetical order rather than the config's.
	Alphabetical bool
	// External leaves the nominations to another controller: copies go
	// to the nominated clusters only.
	External bool
}

// Decision is what to do for one workload.
type Decision struct {
	// CreateWorkload lists the clusters that get a copy of the workload.
	CreateWorkload []string
	// Delete lists the clusters whose copy and job go.
	Delete []string
	// CreateJob names the cluster the job is created in ("" for none).
	CreateJob string
	// SyncFrom names the cluster whose job's status is mirrored into the
	// local job ("" for none).
	SyncFrom string
	// Nominate, when not nil, is the new status.nominatedClusterNames.
	Nominate []string
	// ClusterName, when not nil, is the new status.clusterName (the
	// nominations are cleared with it).
	ClusterName *string
	// ClearPlacement clears clusterName and the nominations (the workload
	// gave its quota back).
	ClearPlacement bool
	// State is the check's new state; nil leaves it as it is.
	State *kueue.AdmissionCheckState
	// After asks to look again after this long (0: on the next change).
	After time.Duration
	// Stopping says the workload gave its quota back (and is not
	// finished): its job in the manager is to be stopped.
	Stopping bool
	// Topology holds, per PodSet whose topology request waits, the
	// worker's assignment to copy into the manager's admission.
	Topology map[kueue.PodSetReference]*kueue.TopologyAssignment
}

// Decide decides for one workload with a MultiKueue check.
func Decide(in Input) Decision {
	wl := in.Workload
	var d Decision
	if !holding(wl) {
		d.Delete = withObjects(in.Remotes, "")
		d.Stopping = !finished(wl)
		if d.Stopping && (wl.Status.ClusterName != nil || len(wl.Status.NominatedClusterNames) > 0) {
			d.ClearPlacement = true
		}
		return d
	}
	st := checkState(wl, in.Check)
	if st == nil {
		return d
	}
	if name := wl.Status.ClusterName; name != nil {
		return decidePlaced(in, st, *name)
	}
	if st.State != kueue.CheckStatePending {
		return d
	}
	for _, c := range in.Clusters {
		r := in.Remotes[c]
		// Only a nominated cluster may be given the workload, and only
		// for a copy that holds its reservation (not one being evicted).
		if r.Workload == nil || !holding(r.Workload) || !slices.Contains(wl.Status.NominatedClusterNames, c) {
			continue
		}
		d.ClusterName = &c
		d.Delete = withObjects(in.Remotes, c)
		d.Topology = workerTopology(wl, r.Workload)
		if !r.Job {
			d.CreateJob = c
		}
		d.State = newState(st, kueue.CheckStateReady, fmt.Sprintf("The workload got reservation on %q", c), in.Now)
		return d
	}
	targets, after := nominees(in)
	d.After = after
	for _, c := range targets {
		switch rw := in.Remotes[c].Workload; {
		case rw == nil:
			d.CreateWorkload = append(d.CreateWorkload, c)
		case !finished(rw) && evicted(rw):
			// A copy left from an earlier dispatch, evicted there: it
			// goes, and a new one is made.
			d.Delete = append(d.Delete, c)
		}
	}
	if !in.Dispatch.External && !slices.Equal(wl.Status.NominatedClusterNames, targets) {
		d.Nominate = slices.Clone(targets)
		if d.Nominate == nil {
			d.Nominate = []string{}
		}
	}
	msg := fmt.Sprintf("Waiting for a reservation in one of the worker clusters %v", targets)
	switch {
	case len(in.Clusters) == 0:
		msg = "No worker cluster is connected"
	case len(targets) == 0 && in.Dispatch.External:
		msg = "Waiting for the dispatcher to nominate worker clusters"
	}
	if st.Message != msg {
		d.State = newState(st, kueue.CheckStatePending, msg, in.Now)
	}
	return d
}

// nominees are the connected clusters that get copies now, in the
// config's order, and when more are due (0: none).
func nominees(in Input) ([]string, time.Duration) {
	nominated := in.Workload.Status.NominatedClusterNames
	switch {
	case in.Dispatch.External:
		var out []string
		for _, c := range in.Clusters {
			if slices.Contains(nominated, c) {
				out = append(out, c)
			}
		}
		return out, 0
	case !in.Dispatch.Incremental || in.Dispatch.Step <= 0 || in.Dispatch.Round <= 0:
		return in.Clusters, 0
	}
	since := in.Now.Sub(reservedAt(in.Workload))
	rounds := 1 + int(max(since, 0)/in.Dispatch.Round)
	n := min(len(in.Clusters), rounds*in.Dispatch.Step)
	order := in.Clusters
	if in.Dispatch.Alphabetical {
		order = slices.Sorted(slices.Values(in.Clusters))
	}
	var out []string
	for i, c := range order {
		if i < n || slices.Contains(nominated, c) {
			out = append(out, c)
		}
	}
	if n == len(in.Clusters) {
		return out, 0
	}
	return out, time.Duration(rounds)*in.Dispatch.Round - since
}

func reservedAt(wl *kueue.Workload) time.Time {
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// decidePlaced keeps a workload on the worker it was given to.
func decidePlaced(in Input, st *kueue.AdmissionCheckState, cluster string) Decision {
	var d Decision
	d.Delete = withObjects(in.Remotes, cluster)
	r, connected := in.Remotes[cluster]
	if !connected {
		if in.LostSince.IsZero() {
			return d
		}
		left := in.WorkerLostTimeout - in.Now.Sub(in.LostSince)
		if left > 0 {
			d.After = left
			return d
		}
		d.State = newState(st, kueue.CheckStateRetry, fmt.Sprintf("The connection to worker cluster %q was lost for more than %s", cluster, in.WorkerLostTimeout), in.Now)
		return d
	}
	if r.Workload == nil {
		d.State = newState(st, kueue.CheckStateRetry, fmt.Sprintf("The workload's copy in worker cluster %q is gone", cluster), in.Now)
		return d
	}
	if why := evictedIn(r.Workload); why != "" {
		// The worker took its quota back (preemption, a stopped queue, a
		// deactivation there): the manager gives its own back too and
		// dispatches again, so Admitted here means running there.
		d.State = newState(st, kueue.CheckStateRetry, fmt.Sprintf("The workload was evicted in worker cluster %q: %s", cluster, why), in.Now)
		return d
	}
	d.Topology = workerTopology(in.Workload, r.Workload)
	if r.Job {
		d.SyncFrom = cluster
	} else if !finished(r.Workload) {
		d.CreateJob = cluster
	}
	if st.State != kueue.CheckStateReady {
		d.State = newState(st, kueue.CheckStateReady, fmt.Sprintf("The workload got reservation on %q", cluster), in.Now)
	}
	return d
}

// evictedIn says why a worker's copy no longer holds its reservation
// ("" while it does, or when it finished).
func evictedIn(remote *kueue.Workload) string {
	if finished(remote) {
		return ""
	}
	if evicted(remote) {
		c := meta.FindStatusCondition(remote.Status.Conditions, kueue.WorkloadEvicted)
		return fmt.Sprintf("%s: %s", c.Reason, c.Message)
	}
	if !reserved(remote) {
		return "its quota reservation was released"
	}
	return ""
}

// workerTopology returns the worker's topology assignments of the
// manager's PodSets whose topology request waits (nil when none can be
// copied yet).
func workerTopology(wl, remote *kueue.Workload) map[kueue.PodSetReference]*kueue.TopologyAssignment {
	if wl.Status.Admission == nil || remote.Status.Admission == nil {
		return nil
	}
	var out map[kueue.PodSetReference]*kueue.TopologyAssignment
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		if psa.DelayedTopologyRequest == nil || *psa.DelayedTopologyRequest != kueue.DelayedTopologyRequestStatePending {
			continue
		}
		for _, rpsa := range remote.Status.Admission.PodSetAssignments {
			if rpsa.Name == psa.Name && rpsa.TopologyAssignment != nil {
				if out == nil {
					out = map[kueue.PodSetReference]*kueue.TopologyAssignment{}
				}
				out[psa.Name] = rpsa.TopologyAssignment.DeepCopy()
			}
		}
	}
	return out
}

// withObjects lists the clusters, other than keep, holding a copy or a job.
func withObjects(remotes map[string]Remote, keep string) []string {
	var out []string
	for c, r := range remotes {
		if c != keep && (r.Workload != nil || r.Job) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

func evicted(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

// holding says whether the manager's workload holds a quota reservation
// it may keep: reserved, not evicted, not finished, not being deleted.
func holding(wl *kueue.Workload) bool {
	return wl.DeletionTimestamp.IsZero() && reserved(wl) && !finished(wl) && !evicted(wl)
}

func reserved(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

func finished(wl *kueue.Workload) bool {
	return meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

func checkState(wl *kueue.Workload, name kueue.AdmissionCheckReference) *kueue.AdmissionCheckState {
	for i := range wl.Status.AdmissionChecks {
		if wl.Status.AdmissionChecks[i].Name == name {
			return &wl.Status.AdmissionChecks[i]
		}
	}
	return nil
}

func newState(old *kueue.AdmissionCheckState, state kueue.CheckState, msg string, now time.Time) *kueue.AdmissionCheckState {
	out := old.DeepCopy()
	if out.State != state {
		out.LastTransitionTime.Time = now
	}
	out.State, out.Message = state, msg
	return out
}
