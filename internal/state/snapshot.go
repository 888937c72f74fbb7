package state

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/tas"
)

// Snapshot is an immutable view of the state for one scheduling cycle. It
// shares its maps and lists with the state and with other snapshots:
// callers must not modify them. Its Tree is frozen; the scheduling core
// works on a Clone of it.
type Snapshot struct {
	// Now (Unix nanoseconds) is when the snapshot was taken.
	Now int64
	// EvictionDelay is how long recent evictions took, from the decision
	// to the quota seen free (the median of the last few; 0 when none is
	// recent). Waiting for a victim that ends by itself sooner than that
	// gains what an eviction would, without the lost work.
	EvictionDelay time.Duration
	// FairUsage holds, when admission fair sharing is on, the score of
	// every LocalQueue (namespace and name) of the ClusterQueues that use
	// it: among their own workloads, victims from the LocalQueue that used
	// most go first.
	FairUsage map[types.NamespacedName]float64
	Tree      *hierarchy.Tree
	// Specs changes whenever a flavor, ClusterQueue, Cohort, admission
	// check or namespace does: equal values in two snapshots of one State
	// mean the same specs.
	Specs         uint64
	ClusterQueues map[kueue.ClusterQueueReference]*ClusterQueue
	Cohorts       map[kueue.CohortReference]*Cohort
	Flavors       map[kueue.ResourceFlavorReference]*Flavor
	Namespaces    map[string]labels.Set
	// Topologies holds, for every TAS flavor (one naming a Topology), the
	// free capacity of its nodes by topology domain; TopologyErrors says
	// why a TAS flavor has none. Shared: clone a tree before placing.
	Topologies     map[kueue.ResourceFlavorReference]*tas.Tree
	TopologyErrors map[kueue.ResourceFlavorReference]string
	// NodeLabels holds the labels of the nodes, by name, when some TAS
	// flavor has a tree (shared, read-only).
	NodeLabels map[string]map[string]string
	// NodeTaints holds, per TAS flavor, the NoSchedule and NoExecute taints
	// of its nodes that the flavor does not tolerate: only PodSets that
	// tolerate them may be placed there.
	NodeTaints map[kueue.ResourceFlavorReference]map[string][]corev1.Taint
	// TopologyBases are the TAS flavors' trees before any admitted
	// workload's pods (nodes less other pods), and TopologyUsers the
	// admitted workloads whose pods take topology capacity, by key: a
	// preemption search rebuilds trees without its victims from them.
	TopologyBases map[kueue.ResourceFlavorReference]*tas.Tree
	TopologyUsers []*Admitted
	checks        map[kueue.AdmissionCheckReference]bool
	controllers   map[kueue.AdmissionCheckReference]string
	inactive      map[kueue.ClusterQueueReference]Inactive
	byQueue       admittedView
	admitted      int
}

// Inactive explains why a ClusterQueue cannot admit workloads. Reason is one
// of Kueue's Active condition reasons.
type Inactive struct {
	Reason  string
	Message string
}

// Reasons of an inactive ClusterQueue (the Active condition's reasons).
const (
	InactiveStopped                = "Stopped"
	InactiveFlavorNotFound         = "FlavorNotFound"
	InactiveAdmissionCheckNotFound = "AdmissionCheckNotFound"
	InactiveAdmissionCheckInactive = "AdmissionCheckInactive"
	InactiveCohortCycle            = "CohortCycle"
	InactiveTerminating            = "Terminating"
	InactiveFinalizerPending       = "FinalizerPending"
	InactiveTopologyNotFound       = "TopologyNotFound"
	// A ClusterQueue may have one MultiKueue check, for all its flavors,
	// and no ProvisioningRequest check with it.
	InactiveMultipleMultiKueue     = "MultipleMultiKueueAdmissionChecks"
	InactiveMultiKueuePerFlavor    = "MultiKueueAdmissionCheckAppliedPerFlavor"
	InactiveMultiKueueProvisioning = "MultiKueueWithProvisioningRequest"
)

// ClusterQueueInactive returns why the ClusterQueue cannot admit, or false
// when it is active.
func (s *Snapshot) ClusterQueueInactive(name kueue.ClusterQueueReference) (Inactive, bool) {
	in, ok := s.inactive[name]
	return in, ok
}

func computeInactive(queues map[kueue.ClusterQueueReference]*ClusterQueue, flavors map[kueue.ResourceFlavorReference]*Flavor,
	checks map[kueue.AdmissionCheckReference]bool, controllers map[kueue.AdmissionCheckReference]string,
	topologies map[kueue.TopologyReference][]string, tree *hierarchy.Tree) map[kueue.ClusterQueueReference]Inactive {
	out := map[kueue.ClusterQueueReference]Inactive{}
	for name, cq := range queues {
		var reasons, messages []string
		add := func(reason, msg string) {
			reasons = append(reasons, reason)
			messages = append(messages, msg)
		}
		if cq.Terminating {
			add(InactiveTerminating, "the ClusterQueue is terminating; it admits nothing new and keeps its quota in the cohort until its workloads release it")
		}
		if cq.AwaitingFinalizer && !cq.Terminating {
			add(InactiveFinalizerPending, "the ClusterQueue does not carry its resource-in-use finalizer yet")
		}
		if cq.StopPolicy != kueue.None {
			add(InactiveStopped, "the ClusterQueue is stopped (stopPolicy "+string(cq.StopPolicy)+")")
		}
		var missing, noTopology []string
		for _, f := range cq.Flavors() {
			rf, ok := flavors[f]
			if !ok {
				missing = append(missing, string(f))
				continue
			}
			if rf.TopologyName != "" && topologies[rf.TopologyName] == nil {
				noTopology = append(noTopology, string(rf.TopologyName))
			}
		}
		if len(missing) > 0 {
			add(InactiveFlavorNotFound, "ResourceFlavors not found: "+strings.Join(missing, ", "))
		}
		if len(noTopology) > 0 {
			add(InactiveTopologyNotFound, "Topologies not found: "+strings.Join(noTopology, ", "))
		}
		for _, ac := range cq.AdmissionChecks {
			active, found := checks[ac.Name]
			switch {
			case !found:
				add(InactiveAdmissionCheckNotFound, fmt.Sprintf("AdmissionCheck %s not found", ac.Name))
			case !active:
				add(InactiveAdmissionCheckInactive, fmt.Sprintf("AdmissionCheck %s is not active", ac.Name))
			}
		}
		if reason, msg := multiKueueMisuse(cq, controllers); reason != "" {
			add(reason, msg)
		}
		if n := tree.ClusterQueue(name); n != nil && !n.Active() {
			add(InactiveCohortCycle, "the Cohort "+string(cq.Cohort)+" is part of a cycle of parents")
		}
		if len(reasons) > 0 {
			out[name] = Inactive{Reason: reasons[0], Message: strings.Join(messages, "; ")}
		}
	}
	return out
}

// NamespaceAllowed reports whether the ClusterQueue admits workloads from ns.
func (s *Snapshot) NamespaceAllowed(cq *ClusterQueue, ns string) bool {
	if cq.NamespaceSelector == nil {
		return false
	}
	return cq.NamespaceSelector.Matches(s.Namespaces[ns])
}

// AdmittedIn returns the workloads holding quota in a ClusterQueue, sorted
// by key.
func (s *Snapshot) AdmittedIn(name kueue.ClusterQueueReference) []*Admitted {
	return s.byQueue.get(name)
}

// AdmittedCount is the number of workloads holding quota.
func (s *Snapshot) AdmittedCount() int { return s.admitted }

// EachAdmitted calls f for every workload holding quota, by ClusterQueue
// name and then key, until f returns false.
func (s *Snapshot) EachAdmitted(f func(*Admitted) bool) {
	for _, name := range s.byQueue.names() {
		for _, a := range s.byQueue.get(name) {
			if !f(a) {
				return
			}
		}
	}
}

func compareKeys(a, b *Admitted) int {
	if c := strings.Compare(a.Key.Namespace, b.Key.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Key.Name, b.Key.Name)
}

// DefersTopology says whether a ClusterQueue leaves the topology placement
// of its workloads to another cluster: one of its checks does (MultiKueue,
// whose worker places the pods where they run). Its TAS flavors then count
// quota only.
func (s *Snapshot) DefersTopology(cq *ClusterQueue) bool { return defersTopology(cq, s.controllers) }

// DefersTopology is Snapshot.DefersTopology on the current state.
func (s *State) DefersTopology(cq *ClusterQueue) bool { return defersTopology(cq, s.controllers.m) }

func defersTopology(cq *ClusterQueue, controllers map[kueue.AdmissionCheckReference]string) bool {
	for _, ac := range cq.AdmissionChecks {
		if controllers[ac.Name] == kueue.MultiKueueControllerName {
			return true
		}
	}
	return false
}

// ProvisionsTopology says whether a ProvisioningRequest check of the
// ClusterQueue applies to the flavor: the nodes its workloads run on may
// not exist until the request is provisioned, so their topology placement
// waits for the check (a second pass, see scheduling.PlaceDelayed).
func (s *Snapshot) ProvisionsTopology(cq *ClusterQueue, flavor kueue.ResourceFlavorReference) bool {
	for _, ac := range cq.AdmissionChecks {
		if s.controllers[ac.Name] == kueue.ProvisioningRequestControllerName &&
			(len(ac.OnFlavors) == 0 || slices.Contains(ac.OnFlavors, flavor)) {
			return true
		}
	}
	return false
}

// multiKueueMisuse says what is wrong with how a ClusterQueue uses
// MultiKueue checks ("" when nothing is).
func multiKueueMisuse(cq *ClusterQueue, controllers map[kueue.AdmissionCheckReference]string) (string, string) {
	var mk []string
	provisioning, perFlavor := false, false
	for _, ac := range cq.AdmissionChecks {
		switch controllers[ac.Name] {
		case kueue.MultiKueueControllerName:
			mk = append(mk, string(ac.Name))
			perFlavor = perFlavor || len(ac.OnFlavors) > 0
		case kueue.ProvisioningRequestControllerName:
			provisioning = true
		}
	}
	switch {
	case len(mk) > 1:
		return InactiveMultipleMultiKueue, "a ClusterQueue may have one MultiKueue admission check, it has " + strings.Join(mk, ", ")
	case len(mk) == 1 && perFlavor:
		return InactiveMultiKueuePerFlavor, "the MultiKueue admission check " + mk[0] + " cannot be limited to some flavors (onFlavors)"
	case len(mk) == 1 && provisioning:
		return InactiveMultiKueueProvisioning, "the MultiKueue admission check " + mk[0] + " cannot be combined with a ProvisioningRequest check"
	}
	return "", ""
}
