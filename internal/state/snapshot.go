package state

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
)

// Snapshot is an immutable view of the state for one scheduling cycle.
// Callers must not modify it; the scheduling core clones the tree before
// simulating admissions.
type Snapshot struct {
	// Now (Unix nanoseconds) is when the snapshot was taken.
	Now           int64
	Tree          *hierarchy.Tree
	ClusterQueues map[kueue.ClusterQueueReference]*ClusterQueue
	Cohorts       map[kueue.CohortReference]*Cohort
	Flavors       map[kueue.ResourceFlavorReference]*Flavor
	Namespaces    map[string]labels.Set
	Admitted      map[types.NamespacedName]*Admitted
	checks        map[kueue.AdmissionCheckReference]bool
	inactive      map[kueue.ClusterQueueReference]Inactive
	byQueue       map[kueue.ClusterQueueReference][]*Admitted
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
)

// ClusterQueueInactive returns why the ClusterQueue cannot admit, or false
// when it is active.
func (s *Snapshot) ClusterQueueInactive(name kueue.ClusterQueueReference) (Inactive, bool) {
	in, ok := s.inactive[name]
	return in, ok
}

func (s *Snapshot) computeInactive() {
	s.inactive = map[kueue.ClusterQueueReference]Inactive{}
	for name, cq := range s.ClusterQueues {
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
		var missing []string
		for _, f := range cq.Flavors() {
			if _, ok := s.Flavors[f]; !ok {
				missing = append(missing, string(f))
			}
		}
		if len(missing) > 0 {
			add(InactiveFlavorNotFound, "ResourceFlavors not found: "+strings.Join(missing, ", "))
		}
		for _, ac := range cq.AdmissionChecks {
			active, found := s.checks[ac.Name]
			switch {
			case !found:
				add(InactiveAdmissionCheckNotFound, fmt.Sprintf("AdmissionCheck %s not found", ac.Name))
			case !active:
				add(InactiveAdmissionCheckInactive, fmt.Sprintf("AdmissionCheck %s is not active", ac.Name))
			}
		}
		if n := s.Tree.ClusterQueue(name); n != nil && !n.Active() {
			add(InactiveCohortCycle, "the Cohort "+string(cq.Cohort)+" is part of a cycle of parents")
		}
		if len(reasons) > 0 {
			s.inactive[name] = Inactive{Reason: reasons[0], Message: strings.Join(messages, "; ")}
		}
	}
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
	return s.byQueue[name]
}

func indexByQueue(byQueue map[kueue.ClusterQueueReference]map[types.NamespacedName]*Admitted) map[kueue.ClusterQueueReference][]*Admitted {
	out := make(map[kueue.ClusterQueueReference][]*Admitted, len(byQueue))
	for name, byKey := range byQueue {
		list := make([]*Admitted, 0, len(byKey))
		for _, a := range byKey {
			list = append(list, a)
		}
		slices.SortFunc(list, func(a, b *Admitted) int {
			if c := strings.Compare(a.Key.Namespace, b.Key.Namespace); c != 0 {
				return c
			}
			return strings.Compare(a.Key.Name, b.Key.Name)
		})
		out[name] = list
	}
	return out
}
