// Package scheduling is Kuota's pure decision core: given a snapshot of the
// cluster and the pending workloads of every ClusterQueue in queue order, one
// call to Decide admits every workload that fits, in order, respecting each
// queue's strategy, and says for every other workload why it waits. It does
// no I/O; the same input always gives the same decisions.
package scheduling

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
	"github.com/kuota-dev/kuota/internal/workload"
)

// Reason is a machine-readable reason why a workload was not admitted.
type Reason string

const (
	// NoMatchingFlavor: no flavor may host some PodSet, or a resource is not
	// covered by the ClusterQueue.
	NoMatchingFlavor = Reason(flavors.NoMatchingFlavor)
	// ExceedsMaxQuota: the workload asks for more than the ClusterQueue could
	// ever obtain.
	ExceedsMaxQuota = Reason(flavors.ExceedsMaxQuota)
	// WaitingForQuota: the quota exists but is in use.
	WaitingForQuota = Reason(flavors.WaitingForQuota)
	// NamespaceMismatch: the ClusterQueue's namespaceSelector excludes the
	// workload's namespace.
	NamespaceMismatch Reason = "NamespaceMismatch"
	// ClusterQueueNotFound: the ClusterQueue does not exist.
	ClusterQueueNotFound Reason = "ClusterQueueNotFound"
	// ClusterQueueInactive: the ClusterQueue cannot admit (stopped, missing
	// flavors or checks, cohort cycle).
	ClusterQueueInactive Reason = "ClusterQueueInactive"
	// BlockedByHead: a StrictFIFO queue's head does not fit, so nothing
	// behind it is admitted.
	BlockedByHead Reason = "BlockedByHead"
	// WaitingForPreemptedWorkloads: the workload fits once its victims,
	// already chosen, release their quota.
	WaitingForPreemptedWorkloads Reason = "WaitingForPreemptedWorkloads"
)

// ConditionReason maps the reason to the QuotaReserved=False condition
// reason Kueue uses.
func (r Reason) ConditionReason() string {
	switch r {
	case NoMatchingFlavor, ExceedsMaxQuota, WaitingForQuota:
		return string(r)
	case NamespaceMismatch, ClusterQueueNotFound:
		return "Misconfigured"
	case ClusterQueueInactive:
		return "Suspended"
	case WaitingForPreemptedWorkloads, TopologyPlacementFailed:
		return string(r)
	case BlockedByHead:
		return "WaitingForQuota"
	}
	return "Pending"
}

// Decision is the outcome of one cycle for one workload.
type Decision struct {
	Workload *workload.Info
	// Admit is true when the workload gets Assignment's quota.
	Admit bool
	// Assignment is set when admitted, and when not admitted because of
	// quota, to show the best attempt.
	Assignment *flavors.Assignment
	// Victims, when set, must be evicted for the workload to fit; the
	// workload is not admitted yet (Reason WaitingForPreemptedWorkloads).
	Victims []preemption.Target
	// Reason explains why the workload was not admitted; Explain gives
	// the details in words. Message holds what the assignment does not
	// say (rendering assignment details costs, so it is done on demand).
	Reason  Reason
	Message string
	// Held is the quota set aside for the workload for the rest of the
	// cycle without admitting it: a preemptor's usage, or what a workload
	// that found no victims may not lose to later ones. Nothing is held
	// beyond the cycle.
	Held resources.FlavorResourceQuantities
	// Deferred is set when the workload was not fully evaluated this cycle
	// (its queue already failed a preemption search): it should be tried
	// again next cycle rather than set aside.
	Deferred bool
	// BehindHolder is set when an earlier workload of the same shape in the
	// same queue holds quota this cycle: the refusal must not park the
	// shape, or the holder would be hidden from the next cycles and the
	// quota it waits for would go to lower-priority workloads.
	BehindHolder bool
	// Recheck (Unix nanoseconds), when set, is when the decision may change
	// though nothing else did: a preemptor waiting for workloads expected
	// to end soon preempts them once one is late.
	Recheck int64
}

// Result is the outcome of one cycle.
type Result struct {
	// Decisions holds one decision per candidate, in the order made,
	// except for the workloads in Blocked.
	Decisions []Decision
	// Blocked holds, per StrictFIFO ClusterQueue whose head was not
	// admitted, the workloads behind the head: they wait for it
	// (BlockedByHead) and are not decided one by one.
	Blocked []Blocked
	// Admitted counts the admissions.
	Admitted int
}

// Blocked is the rest of a StrictFIFO queue behind a head that was not
// admitted.
type Blocked struct {
	ClusterQueue kueue.ClusterQueueReference
	Head         *workload.Info
	// Workloads are those behind the head, in queue order. The slice may
	// be shared with the candidates: do not modify it.
	Workloads []*workload.Info
}

// Message says why the workloads wait.
func (b *Blocked) Message() string {
	return fmt.Sprintf("waiting behind %s, the head of StrictFIFO ClusterQueue %s, which isn't admitted yet", b.Head.Key, b.ClusterQueue)
}

// Decisions spells the summary out as one BlockedByHead decision per
// workload.
func (b *Blocked) Decisions() []Decision {
	msg := b.Message()
	out := make([]Decision, len(b.Workloads))
	for i, w := range b.Workloads {
		out[i] = Decision{Workload: w, Reason: BlockedByHead, Message: msg}
	}
	return out
}

// AllDecisions returns the decisions followed by the blocked workloads
// spelled out (Blocked.Decisions): one per candidate.
func (r *Result) AllDecisions() []Decision {
	out := slices.Clone(r.Decisions)
	for i := range r.Blocked {
		out = append(out, r.Blocked[i].Decisions()...)
	}
	return out
}

// Workloads is the number of candidates decided: the decisions and the
// blocked workloads.
func (r *Result) Workloads() int {
	n := len(r.Decisions)
	for i := range r.Blocked {
		n += len(r.Blocked[i].Workloads)
	}
	return n
}

// Release hands back the memory of the decisions, cleared (so that it
// keeps no workload alive), for the next cycle's DecideInto; r's
// decisions must not be read afterwards.
func (r *Result) Release() []Decision {
	clear(r.Decisions)
	out := r.Decisions[:0]
	r.Decisions = nil
	return out
}

// DefaultPatience is the manager's default Options.Patience: long enough
// that short jobs (CI steps, small ETL tasks) are waited for rather than
// evicted a moment before they would end, short against the hours an ML
// training job runs.
const DefaultPatience = 10 * time.Second

// Options tune the cycle.
type Options struct {
	Flavors flavors.Options
	// Patience, when positive, makes a workload that could preempt wait
	// instead when every workload it would evict is expected to end by
	// itself within Patience (state.Admitted.ExpectedEnd): the quota it
	// needs is held for it meanwhile, and nothing is evicted. Victims
	// expected to run longer, or whose end is unknown, are preempted at
	// once, as Kueue does.
	Patience time.Duration
	// FairSharing, when set, orders admissions within each cohort tree by
	// dominant resource share and chooses victims in other queues by share.
	FairSharing *FairSharing
}

// FairSharing configures fair sharing.
type FairSharing struct {
	// Strategies are the preemption strategies, tried in order.
	Strategies []preemption.Strategy
}

// Explain says in words why the workload was not admitted (or, for a
// preemptor, what it waits for).
func (d *Decision) Explain() string {
	if d.Admit || d.Assignment == nil || len(d.Victims) > 0 {
		return d.Message
	}
	detail := d.Assignment.Message()
	switch {
	case detail == "":
		return d.Message
	case d.Message == "":
		return detail
	}
	return detail + "; " + d.Message
}

// Hint returns, for a decision with victims, the assignment the workload
// preempted for; the caller puts it on the workload's Info (with
// Preempting) so that the next cycles try it first.
func (d *Decision) Hint() *workload.Hint {
	if d.Assignment == nil {
		return nil
	}
	h := &workload.Hint{}
	for _, ps := range d.Assignment.PodSets {
		h.Counts = append(h.Counts, ps.Count)
		h.Flavors = append(h.Flavors, ps.Flavors)
	}
	if len(d.Victims) > 0 {
		h.Victims = make([]workload.Victim, len(d.Victims))
		for i, v := range d.Victims {
			h.Victims[i] = workload.Victim{Key: v.Workload.Key, UID: v.Workload.UID, ClusterQueue: v.Workload.ClusterQueue, Reason: v.Reason}
		}
	}
	return h
}

// MinUsage returns the quota an admitted workload would need at the
// smallest counts partial admission allows, on the flavors of asg; nil when
// it cannot shrink. It goes into state.Admitted.MinUsage.
func MinUsage(shape *workload.Shape, asg *flavors.Assignment) resources.FlavorResourceQuantities {
	if !shape.HasPartialAdmission() || len(asg.PodSets) != len(shape.PodSets) {
		return nil
	}
	out := asg.Usage.Clone()
	for i := range shape.PodSets {
		ps, psa := &shape.PodSets[i], &asg.PodSets[i]
		if ps.MinCount <= 0 || psa.Count <= ps.MinCount {
			continue
		}
		extra := int64(psa.Count - ps.MinCount)
		for r, f := range psa.Flavors {
			fr := resources.FlavorResource{Flavor: f, Resource: r}
			out[fr] = resources.Sub(out[fr], resources.Mul(ps.PerPod[r], extra))
		}
	}
	return out
}

// Parking says what a refusal sets aside until the cluster changes.
type Parking int

const (
	// ParkNothing: the workload is tried again next cycle.
	ParkNothing Parking = iota
	// ParkWorkload: the workload alone waits, for a reason of its own (its
	// namespace, or its queue inactive or missing).
	ParkWorkload
	// ParkShape: every workload of its shape in its ClusterQueue waits
	// (quota or flavors), under BestEffortFIFO; a StrictFIFO queue keeps
	// its head.
	ParkShape
)

// Parking returns what the refusal sets aside in a queue of the strategy.
func (d *Decision) Parking(strategy kueue.QueueingStrategy) Parking {
	if d.Admit || d.Deferred || d.BehindHolder || len(d.Victims) > 0 || len(d.Held) > 0 {
		// A workload holding quota must come back next cycle to hold it
		// again, or the quota would go to the workloads behind it.
		return ParkNothing
	}
	switch d.Reason {
	case NamespaceMismatch, ClusterQueueInactive, ClusterQueueNotFound:
		return ParkWorkload
	case NoMatchingFlavor, ExceedsMaxQuota, WaitingForQuota, TopologyPlacementFailed:
		if strategy == kueue.BestEffortFIFO && (d.Workload == nil || d.Workload.Replaces == nil) {
			// A growing slice's refusal depends on its pinned flavors,
			// not on its shape alone: it parks nothing.
			return ParkShape
		}
	}
	return ParkNothing
}

// AdmissionOf converts an assignment in ClusterQueue cq to the Workload's
// status.admission.
func AdmissionOf(cq kueue.ClusterQueueReference, asg *flavors.Assignment) *kueue.Admission {
	adm := &kueue.Admission{ClusterQueue: cq}
	for _, ps := range asg.PodSets {
		count := ps.Count
		psa := kueue.PodSetAssignment{
			Name:          ps.Name,
			Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{},
			ResourceUsage: corev1.ResourceList{},
			Count:         &count,
		}
		if ps.Topology != nil {
			psa.TopologyAssignment = ps.Topology.DeepCopy()
		}
		if ps.DelayedTopology {
			psa.DelayedTopologyRequest = ptr.To(kueue.DelayedTopologyRequestStatePending)
		}
		for r, f := range ps.Flavors {
			psa.Flavors[r] = f
			psa.ResourceUsage[r] = resources.ToQuantity(r, ps.Requests[r])
		}
		adm.PodSetAssignments = append(adm.PodSetAssignments, psa)
	}
	return adm
}
