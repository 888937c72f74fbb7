package state

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/tas"
)

// Topology-aware scheduling (TAS) state: the Topologies, the nodes that
// may host a TAS flavor's pods, and what pods Kuota did not place take of
// each node. A snapshot turns them, with the topology assignments of the
// admitted workloads, into one free-capacity tree per TAS flavor
// (Snapshot.Topologies). Clusters without a TAS flavor pay nothing: no
// tree is built and the manager does not watch nodes or pods for it.

// TopologyUse is the capacity an admitted PodSet takes in its flavor's
// topology: PerPod times the pod count of each domain of Assignment.
type TopologyUse struct {
	Flavor     kueue.ResourceFlavorReference
	Assignment *kueue.TopologyAssignment
	PerPod     resources.Requests
}

// Node is what TAS reads of a node.
type Node struct {
	Name        string
	Labels      map[string]string
	Allocatable resources.Requests
	Taints      []corev1.Taint
	// Schedulable is false for a node that is not Ready or is cordoned.
	Schedulable bool
	// Ready is the node's Ready condition (false when it has none).
	Ready bool
}

// holderChange is one admission's change of topology capacity: old
// released (nil: none), new taken (nil: none).
type holderChange struct{ old, new *Admitted }

// podUse is one pod's requests on its node.
type podUse struct {
	node     string
	requests resources.Requests
}

// tasState is the TAS part of State.
type tasState struct {
	topologies map[kueue.TopologyReference][]string
	nodes      map[string]*Node
	pods       map[types.NamespacedName]podUse
	// used sums the pods' requests per node.
	used map[string]resources.Requests
	// version changes with the nodes, pods, Topologies and listing;
	// bases holds the trees of nodes less pods built at baseAt (and the
	// flavors' version then). uses changes with the admissions' topology
	// assignments; trees holds bases less those, built at treesAt.
	version, baseAt, baseFlavors uint64
	uses, treesAt                uint64
	bases, trees                 map[kueue.ResourceFlavorReference]*tas.Tree
	treeErrs                     map[kueue.ResourceFlavorReference]string
	// nodeLabels holds every node's labels, by name, as of baseAt; taints,
	// per flavor, the taints of its nodes the flavor does not tolerate.
	nodeLabels map[string]map[string]string
	taints     map[kueue.ResourceFlavorReference]map[string][]corev1.Taint
	// holders are the admissions that take topology capacity;
	// holderList lists them by key, as of treesAt.
	holders    map[types.NamespacedName]*Admitted
	holderList []*Admitted
	// changes are the holders' changes since treesAt, applied to the trees
	// one by one when that is exact (applyChanges).
	changes []holderChange
	// synced is set once the nodes and pods were listed.
	synced bool
	// gone keeps the labels of deleted nodes that admissions still place
	// pods on, so that their pods can be moved within their domain.
	gone map[string]map[string]string
	// byHost lists the nodes by their host name label, which topology
	// assignments name (not always the node's name, nor unique).
	byHost map[string][]string
}

func newTASState() tasState {
	return tasState{
		topologies: map[kueue.TopologyReference][]string{},
		nodes:      map[string]*Node{},
		pods:       map[types.NamespacedName]podUse{},
		used:       map[string]resources.Requests{},
		holders:    map[types.NamespacedName]*Admitted{},
		baseAt:     ^uint64(0),
	}
}

// SetTopology records a Topology's levels (node label keys, widest first).
func (s *State) SetTopology(name kueue.TopologyReference, levels []string) {
	if slices.Equal(s.tas.topologies[name], levels) {
		return
	}
	_, known := s.tas.topologies[name]
	s.tas.topologies[name] = slices.Clone(levels)
	s.tas.version++
	if !known {
		s.inactive = nil
	}
}

// DeleteTopology forgets a Topology.
func (s *State) DeleteTopology(name kueue.TopologyReference) {
	if _, ok := s.tas.topologies[name]; !ok {
		return
	}
	delete(s.tas.topologies, name)
	s.tas.version++
	s.inactive = nil
}

// SetNode records a node.
func (s *State) SetNode(n *Node) {
	if old, ok := s.tas.nodes[n.Name]; ok {
		s.unindexHost(old)
	}
	s.tas.nodes[n.Name] = n
	s.indexHost(n)
	delete(s.tas.gone, n.Name)
	s.tas.version++
}

// DeleteNode forgets a node. While admissions still place pods on it, its
// labels are kept (FailedNodes, AssignedNodes); those of other deleted
// nodes no admission names any longer are dropped.
func (s *State) DeleteNode(name string) {
	n, ok := s.tas.nodes[name]
	if !ok {
		return
	}
	delete(s.tas.nodes, name)
	s.unindexHost(n)
	s.tas.version++
	for g, labels := range s.tas.gone {
		if len(s.holdersOn(g, labels)) == 0 {
			delete(s.tas.gone, g)
		}
	}
	if len(s.holdersOn(name, n.Labels)) > 0 {
		if s.tas.gone == nil {
			s.tas.gone = map[string]map[string]string{}
		}
		s.tas.gone[name] = n.Labels
	}
}

// FailedNodes returns the named nodes with their labels: those the state
// holds, or the last known ones of a node deleted while admissions placed
// pods on it (none for a node never seen).
func (s *State) FailedNodes(names []string) []tas.FailedNode {
	out := make([]tas.FailedNode, len(names))
	for i, name := range names {
		out[i] = tas.FailedNode{Name: name, Labels: s.nodeLabels(name)}
	}
	return out
}

// nodeLabels returns a node's labels, or a deleted node's last known ones.
func (s *State) nodeLabels(name string) map[string]string {
	if n, ok := s.tas.nodes[name]; ok {
		return n.Labels
	}
	return s.tas.gone[name]
}

// AssignedNodes returns the names of the nodes an assignment at the
// hostname level places pods on, one per domain, in order (nil for an
// assignment at another level). A domain names a node by its host name
// label (and, when host names repeat, by every level), which need not be
// the node's name: the node is the one whose labels carry the domain's
// values, among the nodes the state holds and the deleted ones whose
// labels it keeps. A domain no such node matches keeps its host name.
func (s *State) AssignedNodes(a *kueue.TopologyAssignment) []string {
	domains := tas.HostDomains(a)
	if domains == nil {
		return nil
	}
	out := make([]string, len(domains))
	for i, d := range domains {
		out[i] = s.nodeOf(a.Levels, d.Values)
	}
	return out
}

// nodeOf returns the name of the node a domain at levels is, or its host
// name.
func (s *State) nodeOf(levels, values []string) string {
	host := values[len(values)-1]
	for _, name := range s.tas.byHost[host] {
		if tas.NodeInDomain(name, s.tas.nodes[name].Labels, levels, values) {
			return name
		}
	}
	if n, ok := s.tas.nodes[host]; ok && tas.NodeInDomain(host, n.Labels, levels, values) {
		return host
	}
	for _, name := range slices.Sorted(maps.Keys(s.tas.gone)) {
		if tas.NodeInDomain(name, s.tas.gone[name], levels, values) {
			return name
		}
	}
	return host
}

// indexHost records a node under its host name label.
func (s *State) indexHost(n *Node) {
	host, ok := n.Labels[corev1.LabelHostname]
	if !ok {
		return
	}
	if s.tas.byHost == nil {
		s.tas.byHost = map[string][]string{}
	}
	s.tas.byHost[host] = append(s.tas.byHost[host], n.Name)
}

// unindexHost forgets a node under its host name label.
func (s *State) unindexHost(n *Node) {
	host, ok := n.Labels[corev1.LabelHostname]
	if !ok {
		return
	}
	names := slices.DeleteFunc(s.tas.byHost[host], func(name string) bool { return name == n.Name })
	if len(names) == 0 {
		delete(s.tas.byHost, host)
	} else {
		s.tas.byHost[host] = names
	}
}

// SetPodUsage records what a running pod that Kuota did not place by
// topology takes of its node. An empty node or nil requests forget it.
func (s *State) SetPodUsage(key types.NamespacedName, node string, requests resources.Requests) {
	if prev, ok := s.tas.pods[key]; ok {
		if prev.node == node && maps.Equal(prev.requests, requests) {
			return
		}
		s.subPod(prev)
		delete(s.tas.pods, key)
	}
	if node != "" && len(requests) > 0 {
		u := podUse{node: node, requests: requests}
		s.tas.pods[key] = u
		used := s.tas.used[node]
		if used == nil {
			used = resources.Requests{}
			s.tas.used[node] = used
		}
		used.Add(requests)
	}
	s.tas.version++
}

// DeletePodUsage forgets a pod.
func (s *State) DeletePodUsage(key types.NamespacedName) {
	if prev, ok := s.tas.pods[key]; ok {
		s.subPod(prev)
		delete(s.tas.pods, key)
		s.tas.version++
	}
}

func (s *State) subPod(u podUse) {
	used := s.tas.used[u.node]
	for r, q := range u.requests {
		used[r] = resources.Sub(used[r], q)
		if used[r] <= 0 {
			delete(used, r)
		}
	}
	if len(used) == 0 {
		delete(s.tas.used, u.node)
	}
}

// SetTopologySynced records that the nodes and pods were listed; until
// then no TAS flavor has capacity.
func (s *State) SetTopologySynced() {
	s.tas.synced = true
	s.tas.version++
}

// HasTopologyFlavors reports whether some ResourceFlavor names a Topology.
func (s *State) HasTopologyFlavors() bool {
	for _, f := range s.flavors.m {
		if f.TopologyName != "" {
			return true
		}
	}
	return false
}

// topologyTrees returns the free-capacity tree of every TAS flavor whose
// Topology exists, and for the others why there is none. Trees are built
// again only after a change; callers clone before placing.
func (s *State) topologyTrees() (map[kueue.ResourceFlavorReference]*tas.Tree, map[kueue.ResourceFlavorReference]string) {
	if s.tas.baseAt != s.tas.version || s.tas.baseFlavors != s.flavors.version {
		s.buildBases()
	} else if s.tas.treesAt == s.tas.uses {
		return s.tas.trees, s.tas.treeErrs
	} else if s.applyChanges() {
		return s.tas.trees, s.tas.treeErrs
	}
	s.tas.changes = s.tas.changes[:0]
	trees := make(map[kueue.ResourceFlavorReference]*tas.Tree, len(s.tas.bases))
	for name, base := range s.tas.bases {
		trees[name] = base.Clone()
	}
	list := make([]*Admitted, 0, len(s.tas.holders))
	for _, a := range s.tas.holders {
		list = append(list, a)
	}
	slices.SortFunc(list, compareKeys)
	for _, a := range list {
		for _, u := range a.Topology {
			if t := trees[u.Flavor]; t != nil && u.Assignment != nil {
				t.Use(u.Assignment, u.PerPod)
			}
		}
	}
	s.tas.trees, s.tas.treesAt, s.tas.holderList = trees, s.tas.uses, list
	return trees, s.tas.treeErrs
}

// applyChanges brings the trees and the holder list up to date from the
// changes since they were built, on copies (snapshots share the old
// ones): a few Uses and Releases instead of the Uses of every holder. It
// reports false, changing nothing, when that would not be exact (a tree
// whose domains hold several nodes, a release Use cannot undo), and the
// caller builds the trees again.
func (s *State) applyChanges() bool {
	if s.tas.trees == nil || len(s.tas.changes) == 0 || len(s.tas.changes) > len(s.tas.holders) {
		return false
	}
	trees := make(map[kueue.ResourceFlavorReference]*tas.Tree, len(s.tas.trees))
	for name, t := range s.tas.trees {
		if !t.NodePerDomain() {
			return false
		}
		trees[name] = t.Clone()
	}
	list := slices.Clone(s.tas.holderList)
	for _, ch := range s.tas.changes {
		if ch.old != nil {
			for _, u := range ch.old.Topology {
				if t := trees[u.Flavor]; t != nil && u.Assignment != nil && !t.Release(u.Assignment, u.PerPod) {
					return false
				}
			}
			i, found := slices.BinarySearchFunc(list, ch.old, compareKeys)
			if !found || list[i] != ch.old {
				return false
			}
			list = slices.Delete(list, i, i+1)
		}
		if ch.new != nil {
			for _, u := range ch.new.Topology {
				if t := trees[u.Flavor]; t != nil && u.Assignment != nil {
					t.Use(u.Assignment, u.PerPod)
				}
			}
			i, _ := slices.BinarySearchFunc(list, ch.new, compareKeys)
			list = slices.Insert(list, i, ch.new)
		}
	}
	s.tas.trees, s.tas.treesAt, s.tas.holderList = trees, s.tas.uses, list
	s.tas.changes = s.tas.changes[:0]
	return true
}

// buildBases builds, for every TAS flavor, the tree of its nodes less the
// pods placed without topology, or says why there is none.
func (s *State) buildBases() {
	bases := map[kueue.ResourceFlavorReference]*tas.Tree{}
	taints := map[kueue.ResourceFlavorReference]map[string][]corev1.Taint{}
	errs := map[kueue.ResourceFlavorReference]string{}
	for name, f := range s.flavors.m {
		if f.TopologyName == "" {
			continue
		}
		levels, ok := s.tas.topologies[f.TopologyName]
		switch {
		case !ok:
			errs[name] = "Topology " + string(f.TopologyName) + " not found"
			continue
		case !s.tas.synced:
			errs[name] = "the nodes and pods of the cluster are not listed yet"
			continue
		}
		nodes, tainted := s.flavorNodes(f)
		bases[name] = tas.NewTree(levels, nodes)
		if tainted != nil {
			taints[name] = tainted
		}
	}
	s.tas.bases, s.tas.treeErrs, s.tas.taints = bases, errs, taints
	s.tas.nodeLabels = nil
	if len(bases) > 0 {
		s.tas.nodeLabels = make(map[string]map[string]string, len(s.tas.nodes))
		for name, n := range s.tas.nodes {
			s.tas.nodeLabels[name] = n.Labels
		}
	}
	s.tas.baseAt, s.tas.baseFlavors = s.tas.version, s.flavors.version
	s.tas.treesAt = s.tas.uses - 1 // the trees must be made again
}

// flavorNodes lists, by name, the schedulable nodes carrying the flavor's
// node labels whose NoSchedule and NoExecute taints the flavor tolerates,
// with what pods placed without topology leave free.
func (s *State) flavorNodes(f *Flavor) ([]tas.Node, map[string][]corev1.Taint) {
	names := slices.Sorted(maps.Keys(s.tas.nodes))
	out := make([]tas.Node, 0, len(names))
	var tainted map[string][]corev1.Taint
	for _, name := range names {
		n := s.tas.nodes[name]
		if !n.Schedulable || !matchesLabels(n.Labels, f.NodeLabels) {
			continue
		}
		if left := untolerated(n.Taints, f.Tolerations); len(left) > 0 {
			if tainted == nil {
				tainted = map[string][]corev1.Taint{}
			}
			tainted[name] = left
		}
		free := n.Allocatable.Clone()
		for r, q := range s.tas.used[name] {
			if _, ok := free[r]; ok {
				free[r] = max(0, resources.Sub(free[r], q))
			}
		}
		out = append(out, tas.Node{Name: name, Labels: n.Labels, Free: free})
	}
	return out, tainted
}

func matchesLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// untolerated returns the NoSchedule and NoExecute taints tolerations do
// not tolerate.
func untolerated(taints []corev1.Taint, tolerations []corev1.Toleration) []corev1.Taint {
	var out []corev1.Taint
	for i := range taints {
		t := &taints[i]
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return Tolerates(&tol, t) }) {
			out = append(out, *t)
		}
	}
	return out
}

// Tolerated reports whether tolerations tolerate every taint.
func Tolerated(taints []corev1.Taint, tolerations []corev1.Toleration) bool {
	return len(untolerated(taints, tolerations)) == 0
}

// setHolder records the admission of key (nil: none) for the topology
// capacity it takes.
func (s *State) setHolder(key types.NamespacedName, a *Admitted) {
	prev, held := s.tas.holders[key]
	ch := holderChange{old: prev}
	switch {
	case a != nil && len(a.Topology) > 0:
		s.tas.holders[key] = a
		ch.new = a
	case held:
		delete(s.tas.holders, key)
	default:
		return
	}
	s.tas.changes = append(s.tas.changes, ch)
	s.tas.uses++
}

// Tolerates applies Kubernetes' toleration matching: an empty effect
// matches every effect; an empty key with operator Exists matches every
// taint; Exists ignores the value, Equal (the default) compares it.
func Tolerates(tol *corev1.Toleration, taint *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return tol.Key != "" && tol.Value == taint.Value
	default:
		return false
	}
}

// TopologyTree returns the free-capacity tree of a TAS flavor now (shared:
// clone it before changing it), nil when there is none.
func (s *State) TopologyTree(flavor kueue.ResourceFlavorReference) *tas.Tree {
	trees, _ := s.topologyTrees()
	return trees[flavor]
}

// Node returns a node the manager knows, and whether the nodes were
// listed (until then no node is known, and none can be taken for gone).
func (s *State) Node(name string) (n *Node, found, synced bool) {
	n, found = s.tas.nodes[name]
	return n, found, s.tas.synced
}

// TopologyHolders lists the admissions that take topology capacity (whose
// PodSets were placed by topology).
func (s *State) TopologyHolders() []types.NamespacedName {
	return slices.Collect(maps.Keys(s.tas.holders))
}

// NodeHolders lists the admissions whose topology assignments place pods
// on the node (at the hostname level): a domain whose values the node's
// labels (or a deleted node's last known ones) carry.
func (s *State) NodeHolders(node string) []types.NamespacedName {
	return s.holdersOn(node, s.nodeLabels(node))
}

func (s *State) holdersOn(node string, labels map[string]string) []types.NamespacedName {
	var out []types.NamespacedName
	for key, a := range s.tas.holders {
		if slices.ContainsFunc(a.Topology, func(u TopologyUse) bool { return placesOn(u.Assignment, node, labels) }) {
			out = append(out, key)
		}
	}
	return out
}

// placesOn reports whether an assignment at the hostname level places pods
// on the node.
func placesOn(a *kueue.TopologyAssignment, node string, labels map[string]string) bool {
	return slices.ContainsFunc(tas.HostDomains(a), func(d tas.Domain) bool { return tas.NodeInDomain(node, labels, a.Levels, d.Values) })
}
