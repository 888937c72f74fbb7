package state

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/hierarchy"
	"github.com/kuota-dev/kuota/internal/resources"
)

// Admitted is a workload holding quota in a ClusterQueue.
type Admitted struct {
	Key          types.NamespacedName
	UID          types.UID
	ClusterQueue kueue.ClusterQueueReference
	LocalQueue   kueue.LocalQueueName
	// Admitted is true once every admission check passed (Admitted=True);
	// until then the workload only reserves quota.
	Admitted bool
	Priority int32
	// Usage is the quota the workload holds, per (flavor, resource).
	Usage resources.FlavorResourceQuantities
	// MinUsage, when set, is the least quota the workload could be admitted
	// with again (partial admission at minCount, on the same flavors).
	MinUsage resources.FlavorResourceQuantities
	// ReservedAt (Unix nanoseconds) is when quota was reserved.
	ReservedAt int64
	// QueueOrderTime (Unix nanoseconds) is the workload's queue-order time.
	QueueOrderTime int64
	// Evicting is true once an eviction was requested.
	Evicting bool
	// PodsReady is true once the workload's pods are ready (PodsReady=True).
	PodsReady bool
	// ExpectedEnd (Unix nanoseconds) is when the workload is expected to
	// end by itself: from its maximum execution time, or from how long
	// earlier workloads of its LocalQueue and shape ran. 0 when unknown.
	ExpectedEnd int64
	// EstimateBorrowed marks an ExpectedEnd taken from workloads of the
	// same shape in other LocalQueues of the cohort tree, while its own
	// LocalQueue has none: a weaker guess, never stretched when late.
	EstimateBorrowed bool
	// Topology lists the capacity its PodSets take in their flavors'
	// topologies (topology-aware scheduling); nil for most workloads.
	Topology []TopologyUse
	// GoneQueueCohort is the cohort its ClusterQueue was in while that
	// queue was being deleted (CohortAnnotation). It is read only while
	// the ClusterQueue's object is gone: the workload's usage then still
	// counts in that cohort.
	GoneQueueCohort kueue.CohortReference
}

// CohortAnnotation, on a Workload holding quota in a ClusterQueue being
// deleted, names the queue's cohort. The manager writes it while the
// queue's finalizer holds, so that if the finalizer is removed by force
// and the manager restarts, the workload's usage still counts in that
// cohort until it is released: nothing else in the cluster remembers
// which cohort a deleted queue was in.
const CohortAnnotation = "kuota.dev/clusterqueue-cohort"

// SmallestUsage returns MinUsage, or Usage when the workload cannot shrink.
func (a *Admitted) SmallestUsage() resources.FlavorResourceQuantities {
	if a.MinUsage != nil {
		return a.MinUsage
	}
	return a.Usage
}

// State is the live picture, fed by controllers. It is not safe for
// concurrent use; the manager serializes access.
//
// A snapshot costs what changed since the previous one: the maps it hands
// out are shared until their next change (cowMap), the cohort tree is
// frozen and copied per cohort tree on write (hierarchy.Tree.Freeze), the
// per-queue lists of admitted workloads are sorted again only for the
// queues whose workloads changed, and why queues are inactive is computed
// again only after a change of queues, cohorts, flavors or checks.
type State struct {
	flavors cowMap[kueue.ResourceFlavorReference, *Flavor]
	queues  cowMap[kueue.ClusterQueueReference, *ClusterQueue]
	cohorts cowMap[kueue.CohortReference, *Cohort]
	checks  cowMap[kueue.AdmissionCheckReference, bool]
	// controllers holds the checks' controllerNames.
	controllers cowMap[kueue.AdmissionCheckReference, string]
	namespaces  cowMap[string, labels.Set]
	admitted    map[types.NamespacedName]*Admitted
	// byQueue indexes admitted workloads by ClusterQueue.
	byQueue map[kueue.ClusterQueueReference]map[types.NamespacedName]*Admitted
	// sorted holds each ClusterQueue's admitted workloads sorted by key,
	// as snapshots hand them out; the lists of the queues in unsorted are
	// out of date.
	sorted   admittedLists
	unsorted map[kueue.ClusterQueueReference]struct{}
	// inactive says why ClusterQueues cannot admit; nil when out of date.
	inactive map[kueue.ClusterQueueReference]Inactive
	// gone holds ClusterQueues whose object was deleted while workloads
	// still held quota in them; they stay in the tree, terminating, until
	// the last reservation is released.
	gone map[kueue.ClusterQueueReference]bool
	tree *hierarchy.Tree
	tas  tasState
}

// New returns an empty state.
func New() *State {
	return &State{
		flavors:     newCowMap[kueue.ResourceFlavorReference, *Flavor](),
		queues:      newCowMap[kueue.ClusterQueueReference, *ClusterQueue](),
		cohorts:     newCowMap[kueue.CohortReference, *Cohort](),
		checks:      newCowMap[kueue.AdmissionCheckReference, bool](),
		controllers: newCowMap[kueue.AdmissionCheckReference, string](),
		namespaces:  newCowMap[string, labels.Set](),
		admitted:    map[types.NamespacedName]*Admitted{},
		byQueue:     map[kueue.ClusterQueueReference]map[types.NamespacedName]*Admitted{},
		unsorted:    map[kueue.ClusterQueueReference]struct{}{},
		gone:        map[kueue.ClusterQueueReference]bool{},
		tree:        hierarchy.New(),
		tas:         newTASState(),
	}
}

// SetFlavor adds or replaces a flavor.
func (s *State) SetFlavor(f *Flavor) {
	s.flavors.set(f.Name, f)
	s.inactive = nil
}

// DeleteFlavor removes a flavor.
func (s *State) DeleteFlavor(name kueue.ResourceFlavorReference) {
	s.flavors.del(name)
	s.inactive = nil
}

// SetClusterQueue adds or replaces a ClusterQueue; usage of its admitted
// workloads is kept. Workloads recorded before the ClusterQueue existed (on
// restart, events arrive in any order) are counted when it appears.
func (s *State) SetClusterQueue(cq *ClusterQueue) {
	delete(s.gone, cq.Name)
	s.queues.set(cq.Name, cq)
	s.inactive = nil
	isNew := s.tree.ClusterQueue(cq.Name) == nil
	s.tree.SetClusterQueue(cq.Name, cq.Cohort, cq.Quotas)
	if isNew {
		node := s.tree.ClusterQueue(cq.Name)
		for _, a := range s.byQueue[cq.Name] {
			s.tree.AddUsage(node, a.Usage)
		}
	}
}

// DeleteClusterQueue records that a ClusterQueue object is gone. While
// workloads still hold quota in it, it keeps its place in the tree (its
// nominal quota and usage count in its cohort) as a terminating queue that
// admits nothing; it leaves when the last of them is forgotten. After a
// restart only its workloads are left to tell of it: those that recorded
// its cohort (CohortAnnotation) count there, on a queue without nominal
// quota, which is unknown by then (setGone). It reports whether the queue
// left the tree now.
func (s *State) DeleteClusterQueue(name kueue.ClusterQueueReference) bool {
	s.inactive = nil
	if cq, ok := s.queues.m[name]; ok && len(s.byQueue[name]) > 0 {
		if !cq.Terminating {
			cp := *cq
			cp.Terminating = true
			s.queues.set(name, &cp)
		}
		s.gone[name] = true
		return false
	}
	delete(s.gone, name)
	s.queues.del(name)
	s.tree.DeleteClusterQueue(name)
	return true
}

// SetCohort adds or replaces a Cohort.
func (s *State) SetCohort(c *Cohort) {
	s.cohorts.set(c.Name, c)
	s.inactive = nil
	s.tree.SetCohort(c.Name, c.Parent, c.Quotas)
}

// DeleteCohort removes a Cohort object.
func (s *State) DeleteCohort(name kueue.CohortReference) {
	s.cohorts.del(name)
	s.inactive = nil
	s.tree.DeleteCohort(name)
}

// SetAdmissionCheck records whether an AdmissionCheck exists and is
// active, and its controllerName.
func (s *State) SetAdmissionCheck(name kueue.AdmissionCheckReference, active bool, controller string) {
	s.checks.set(name, active)
	if s.controllers.m[name] != controller {
		s.controllers.set(name, controller)
	}
	s.inactive = nil
}

// DeleteAdmissionCheck forgets an AdmissionCheck.
func (s *State) DeleteAdmissionCheck(name kueue.AdmissionCheckReference) {
	s.checks.del(name)
	s.controllers.del(name)
	s.inactive = nil
}

// SetNamespace records a namespace's labels.
func (s *State) SetNamespace(name string, l map[string]string) { s.namespaces.set(name, labels.Set(l)) }

// DeleteNamespace forgets a namespace.
func (s *State) DeleteNamespace(name string) { s.namespaces.del(name) }

// Assume records an admission and adds its usage to the tree. It fails if
// the workload already holds quota, so nothing is admitted twice.
func (s *State) Assume(a *Admitted) error {
	if prev, ok := s.admitted[a.Key]; ok {
		return fmt.Errorf("workload %s already holds quota in ClusterQueue %s", a.Key, prev.ClusterQueue)
	}
	s.admitted[a.Key] = a
	if s.byQueue[a.ClusterQueue] == nil {
		s.byQueue[a.ClusterQueue] = map[types.NamespacedName]*Admitted{}
	}
	s.byQueue[a.ClusterQueue][a.Key] = a
	s.unsorted[a.ClusterQueue] = struct{}{}
	if n := s.tree.ClusterQueue(a.ClusterQueue); n != nil {
		s.tree.AddUsage(n, a.Usage)
	} else if _, known := s.queues.m[a.ClusterQueue]; !known && a.GoneQueueCohort != "" {
		// On restart, a ClusterQueue whose finalizer was removed by force:
		// its workloads still count in the cohort they recorded.
		s.setGone(a.ClusterQueue, a.GoneQueueCohort)
	}
	s.setHolder(a.Key, a)
	return nil
}

// setGone records, on restart, a ClusterQueue whose object is gone while
// workloads hold quota in it: terminating, without nominal quota (unknown
// by then), in cohort; the usage of every workload recorded in it counts.
func (s *State) setGone(name kueue.ClusterQueueReference, cohort kueue.CohortReference) {
	s.queues.set(name, &ClusterQueue{Name: name, Cohort: cohort, Terminating: true})
	s.gone[name] = true
	s.tree.SetClusterQueue(name, cohort, nil)
	node := s.tree.ClusterQueue(name)
	for _, a := range s.byQueue[name] {
		s.tree.AddUsage(node, a.Usage)
	}
}

// Forget removes an admission and releases its usage. It reports whether
// the workload held quota.
func (s *State) Forget(key types.NamespacedName) bool {
	a, ok := s.admitted[key]
	if !ok {
		return false
	}
	delete(s.admitted, key)
	s.setHolder(key, nil)
	s.unsorted[a.ClusterQueue] = struct{}{}
	if byKey := s.byQueue[a.ClusterQueue]; byKey != nil {
		delete(byKey, key)
		if len(byKey) == 0 {
			delete(s.byQueue, a.ClusterQueue)
		}
	}
	if n := s.tree.ClusterQueue(a.ClusterQueue); n != nil {
		s.tree.RemoveUsage(n, a.Usage)
	}
	if s.gone[a.ClusterQueue] && len(s.byQueue[a.ClusterQueue]) == 0 {
		s.DeleteClusterQueue(a.ClusterQueue)
	}
	return true
}

// Replace updates the record of a workload that holds quota (its Admitted
// or Evicting flags, say) without touching usage. The usage and queue must
// be unchanged; use Forget and Assume otherwise.
func (s *State) Replace(a *Admitted) error {
	prev, ok := s.admitted[a.Key]
	if !ok {
		return fmt.Errorf("workload %s holds no quota", a.Key)
	}
	if prev.ClusterQueue != a.ClusterQueue {
		return fmt.Errorf("workload %s moved from ClusterQueue %s to %s", a.Key, prev.ClusterQueue, a.ClusterQueue)
	}
	s.setHolder(a.Key, a)
	s.admitted[a.Key] = a
	s.byQueue[a.ClusterQueue][a.Key] = a
	s.unsorted[a.ClusterQueue] = struct{}{}
	return nil
}

// EachAdmitted calls f for every workload holding quota until f returns
// false.
func (s *State) EachAdmitted(f func(*Admitted) bool) {
	for _, a := range s.admitted {
		if !f(a) {
			return
		}
	}
}

// AdmittedIn returns the workloads holding quota in a ClusterQueue, in no
// particular order.
func (s *State) AdmittedIn(name kueue.ClusterQueueReference) []*Admitted {
	out := make([]*Admitted, 0, len(s.byQueue[name]))
	for _, a := range s.byQueue[name] {
		out = append(out, a)
	}
	return out
}

// Tree returns the live cohort tree, for reading (status, metrics). Callers
// must not modify it.
func (s *State) Tree() *hierarchy.Tree { return s.tree }

// Cohort returns a Cohort.
func (s *State) Cohort(name kueue.CohortReference) (*Cohort, bool) {
	c, ok := s.cohorts.m[name]
	return c, ok
}

// Flavor returns a ResourceFlavor.
func (s *State) Flavor(name kueue.ResourceFlavorReference) (*Flavor, bool) {
	f, ok := s.flavors.m[name]
	return f, ok
}

// Admitted returns the admission of a workload, if any.
func (s *State) Admitted(key types.NamespacedName) (*Admitted, bool) {
	a, ok := s.admitted[key]
	return a, ok
}

// ClusterQueue returns a ClusterQueue.
func (s *State) ClusterQueue(name kueue.ClusterQueueReference) (*ClusterQueue, bool) {
	cq, ok := s.queues.m[name]
	return cq, ok
}

// ClusterQueueNames returns every ClusterQueue name, sorted.
func (s *State) ClusterQueueNames() []kueue.ClusterQueueReference {
	return slices.Sorted(maps.Keys(s.queues.m))
}

// Snapshot returns an immutable view for one scheduling cycle. It shares
// what did not change since the previous snapshot.
func (s *State) Snapshot() *Snapshot {
	s.sortAdmitted()
	trees, treeErrs := s.topologyTrees()
	return &Snapshot{
		Topologies:     trees,
		TopologyErrors: treeErrs,
		NodeLabels:     s.tas.nodeLabels,
		NodeTaints:     s.tas.taints,
		TopologyBases:  s.tas.bases,
		TopologyUsers:  s.tas.holderList,
		Tree:           s.tree.Freeze(),
		ClusterQueues:  s.queues.share(),
		Cohorts:        s.cohorts.share(),
		Flavors:        s.flavors.share(),
		Namespaces:     s.namespaces.share(),
		checks:         s.checks.share(),
		controllers:    s.controllers.share(),
		inactive:       s.inactiveReasons(),
		byQueue:        s.sorted.share(),
		admitted:       len(s.admitted),
		Specs: s.flavors.version + s.queues.version + s.cohorts.version + s.checks.version +
			s.controllers.version + s.namespaces.version,
	}
}

// ClusterQueueInactive returns why the ClusterQueue cannot admit, or false
// when it is active.
func (s *State) ClusterQueueInactive(name kueue.ClusterQueueReference) (Inactive, bool) {
	in, ok := s.inactiveReasons()[name]
	return in, ok
}

// inactiveReasons returns why ClusterQueues are inactive, computed again
// after a change.
func (s *State) inactiveReasons() map[kueue.ClusterQueueReference]Inactive {
	if s.inactive == nil {
		s.inactive = computeInactive(s.queues.m, s.flavors.m, s.checks.m, s.controllers.m, s.tas.topologies, s.tree)
	}
	return s.inactive
}

// sortAdmitted sorts again the admitted lists of the queues whose
// workloads changed; the lists snapshots hold are never modified.
func (s *State) sortAdmitted() {
	for name := range s.unsorted {
		byKey := s.byQueue[name]
		if len(byKey) == 0 {
			s.sorted.set(name, nil)
			continue
		}
		list := make([]*Admitted, 0, len(byKey))
		for _, a := range byKey {
			list = append(list, a)
		}
		slices.SortFunc(list, compareKeys)
		s.sorted.set(name, list)
	}
	clear(s.unsorted)
}
