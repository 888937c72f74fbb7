// Package flavors assigns a ResourceFlavor to every resource of every PodSet
// of a workload in one ClusterQueue, from the quota left in the cohort tree.
// It tries the flavors of each resource group in the order the ClusterQueue
// lists them, skips flavors the PodSet may not use, classifies each flavor as
// fitting (maybe by borrowing), needing preemption, or not fitting, and picks
// one according to the queue's flavorFungibility. It is pure.
package flavors

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Mode says how a workload fits a flavor. Higher is better.
type Mode uint8

const (
	// NoFit: the workload cannot get the quota now, even by preemption.
	NoFit Mode = iota
	// Preempt: the quota exists but is in use; preempting could free it.
	Preempt
	// Fit: the quota is free now (possibly by borrowing).
	Fit
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Fit:
		return "Fit"
	case Preempt:
		return "Preempt"
	default:
		return "NoFit"
	}
}

// Reason is a machine-readable reason why a workload got no assignment.
type Reason string

const (
	// NoMatchingFlavor: no flavor is eligible for some PodSet (node labels,
	// taints), or a requested resource is not covered by the ClusterQueue.
	NoMatchingFlavor Reason = "NoMatchingFlavor"
	// ExceedsMaxQuota: the request is more than the ClusterQueue could ever
	// obtain, even with nothing else running.
	ExceedsMaxQuota Reason = "ExceedsMaxQuota"
	// WaitingForQuota: the quota exists but is in use.
	WaitingForQuota Reason = "WaitingForQuota"
)

// worse returns the less hopeful of two reasons, ignoring empty ones: among
// things a workload needs all of, the hardest problem explains the refusal.
func worse(a, b Reason) Reason {
	if a == "" || (b != "" && b.rank() < a.rank()) {
		return b
	}
	return a
}

// moreHopeful returns the more hopeful of two reasons, ignoring empty ones:
// among alternatives (flavors), the closest one explains the refusal.
func moreHopeful(a, b Reason) Reason {
	if a == "" || b.rank() > a.rank() {
		return b
	}
	return a
}

// rank orders failure reasons from least to most hopeful.
func (r Reason) rank() int {
	switch r {
	case WaitingForQuota:
		return 3
	case ExceedsMaxQuota:
		return 2
	case NoMatchingFlavor:
		return 1
	}
	return 0
}

// PodSetAssignment is the outcome for one PodSet.
type PodSetAssignment struct {
	Name kueue.PodSetReference
	// Count is the number of pods assigned (below the PodSet's count under
	// partial admission).
	Count int32
	// Flavors maps each requested resource to its flavor.
	Flavors map[corev1.ResourceName]kueue.ResourceFlavorReference
	// Requests are the total requests of Count pods.
	Requests resources.Requests
	Mode     Mode
	// Topology places the pods in topology domains when the flavor is a
	// TAS flavor (set by the scheduling core at admission).
	Topology *kueue.TopologyAssignment
	// DelayedTopology says the pods of this TAS PodSet are placed later:
	// by the MultiKueue worker that runs the workload, or on the nodes a
	// ProvisioningRequest check provisions (scheduling.PlaceDelayed).
	DelayedTopology bool
}

// Assignment is the outcome for a workload.
type Assignment struct {
	PodSets []PodSetAssignment
	// Mode is the worst mode over all PodSets and resources.
	Mode Mode
	// BorrowingLevel is the highest level over all resources: 0 means the
	// workload stays within its ClusterQueue's own quota.
	BorrowingLevel int
	// Usage is the quota the workload would hold, per (flavor, resource).
	Usage resources.FlavorResourceQuantities
	// PreemptFor lists the (flavor, resource) pairs that need preemption
	// when Mode is Preempt, in a stable order.
	PreemptFor []resources.FlavorResource
	// Reason explains a Mode below Fit; Message renders the details.
	Reason   Reason
	problems []podSetProblem
}

// Message explains, in words, why the assignment is below Fit. It is
// rendered on demand: most refusals are never shown to anyone.
func (a *Assignment) Message() string {
	if len(a.problems) == 0 {
		return ""
	}
	parts := make([]string, len(a.problems))
	for i, p := range a.problems {
		notes := make([]string, len(p.notes))
		for j, n := range p.notes {
			notes[j] = n.String()
		}
		parts[i] = fmt.Sprintf("pod set %s: %s", p.name, strings.Join(notes, "; "))
	}
	return "couldn't assign flavors to " + strings.Join(parts, "; ")
}

type podSetProblem struct {
	name  kueue.PodSetReference
	notes []note
}

// note is one reason a flavor or resource did not work, kept as data and
// formatted only when a message is needed.
type note struct {
	kind       noteKind
	text       string
	fr         resources.FlavorResource
	need, have resources.Amount
}

type noteKind uint8

const (
	noteText noteKind = iota
	noteUncovered
	noteExceedsMax
	noteInsufficient
)

func (n note) String() string {
	switch n.kind {
	case noteUncovered:
		return fmt.Sprintf("resource %s unavailable in ClusterQueue", n.fr.Resource)
	case noteExceedsMax:
		return fmt.Sprintf("insufficient quota for %s in flavor %s: %s requested, at most %s can ever be available",
			n.fr.Resource, n.fr.Flavor, show(n.fr.Resource, n.need), show(n.fr.Resource, n.have))
	case noteInsufficient:
		return fmt.Sprintf("insufficient unused quota for %s in flavor %s, %s more needed",
			n.fr.Resource, n.fr.Flavor, show(n.fr.Resource, resources.Sub(n.need, n.have)))
	}
	return n.text
}

// Borrowing reports whether the workload would use quota beyond its
// ClusterQueue's own.
func (a *Assignment) Borrowing() bool { return a.BorrowingLevel > 0 }

// TotalCount is the number of pods assigned over all PodSets.
func (a *Assignment) TotalCount() int64 {
	var n int64
	for _, ps := range a.PodSets {
		n += int64(ps.Count)
	}
	return n
}
