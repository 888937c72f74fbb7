package tas

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// FailedNode is a node whose pods are to move elsewhere (Replace): its
// name and its labels, the last known ones once it is deleted (nil when
// none are known).
type FailedNode struct {
	Name   string
	Labels map[string]string
}

// Replace moves the pods an assignment places on failed nodes to other
// nodes of the tree, keeping the other pods where they are (Kueue's
// replacement of failed nodes). The assignment's lowest level must be the
// host name. A domain of the assignment is a failed node's when the
// node's labels carry its values (NodeInDomain): the host name of a node
// is not always its name, nor unique across racks. within, when not "",
// is a level label: the moved pods go in the domain of that level that
// holds the kept pods (a required topology); otherwise anywhere. layers
// are the request's slices (outermost first): each failed node's pods stay
// in its domain of the deepest slice level above the host name, so that
// every slice-level domain keeps its count, and a slice layer at the host
// name moves them in whole slices per node; a failed node's slice domain
// is read from its labels, so a node the tree no longer holds (deleted, or
// not ready) keeps its pods' domain too. The tree must hold the kept pods
// as used and must not give the failed nodes' capacity to anyone (they
// are masked here). It returns the new assignment, or why there is none.
func (t *Tree) Replace(a *kueue.TopologyAssignment, perPod resources.Requests, failed []FailedNode, within string,
	layers []Slice) (*kueue.TopologyAssignment, string) {
	domains, err := Domains(a)
	if err != nil {
		return nil, "the topology assignment cannot be read: " + err.Error()
	}
	if len(a.Levels) == 0 || a.Levels[len(a.Levels)-1] != hostLevel {
		return nil, "the topology assignment does not name nodes"
	}
	names := map[string]bool{}
	for _, f := range failed {
		names[f.Name] = true
	}
	var kept []Domain
	var lost []lostDomain
	count := int32(0)
	for _, d := range domains {
		if f, ok := failedIn(failed, a.Levels, d.Values); ok {
			lost = append(lost, lostDomain{Domain: d, node: f})
			count += d.Count
		} else {
			kept = append(kept, d)
		}
	}
	if count == 0 {
		return a, ""
	}
	keep, leaf := t.sliceLevels(layers)
	if keep >= 0 {
		return t.replaceInSlices(a, perPod, names, kept, lost, keep, leaf)
	}
	req := Request{Count: count, PerPod: perPod}
	if leaf > 0 {
		req.Slices = []Slice{{Level: hostLevel, Size: leaf}}
	}
	allowed := func(node string) bool { return !names[node] }
	if within != "" {
		l := slices.Index(t.levels, within)
		if l < 0 {
			return nil, fmt.Sprintf("level %q is not a level of the topology", within)
		}
		values := map[string]bool{}
		for _, d := range kept {
			if v, ok := t.domainValue(a.Levels, d.Values, l); ok {
				values[v] = true
			}
		}
		switch len(values) {
		case 0:
			req.Required = within // no pod left: any one domain of the level
		case 1:
			domain := slices.Collect(maps.Keys(values))[0]
			allowed = func(node string) bool {
				v, ok := t.nodeValue(node, l)
				return !names[node] && ok && v == domain
			}
		default:
			return nil, fmt.Sprintf("the pods left are in %d domains of level %q", len(values), within)
		}
	}
	moved, why := t.Masked(allowed).Place(req)
	if moved == nil {
		return nil, fmt.Sprintf("no room for the %d pods of the failed nodes: %s", count, why)
	}
	if !slices.Equal(moved.Levels, a.Levels) {
		return nil, "the topology's levels changed since the assignment"
	}
	added, err := Domains(moved)
	if err != nil {
		return nil, err.Error()
	}
	return Encode(a.Levels, mergeDomains(kept, added)), ""
}

// lostDomain is a domain of an assignment that a failed node is.
type lostDomain struct {
	Domain
	node FailedNode
}

// failedIn returns the failed node a domain of an assignment at levels is.
func failedIn(failed []FailedNode, levels, values []string) (FailedNode, bool) {
	for _, f := range failed {
		if NodeInDomain(f.Name, f.Labels, levels, values) {
			return f, true
		}
	}
	return FailedNode{}, false
}

// sliceLevels returns the deepest slice level above the host name (-1 when
// none) and the size of a slice layer at the host name (0 when none).
func (t *Tree) sliceLevels(layers []Slice) (keep int, leaf int32) {
	keep = -1
	for _, s := range layers {
		switch l := slices.Index(t.levels, s.Level); {
		case l == len(t.levels)-1:
			leaf = s.Size
		case l > keep:
			keep = l
		}
	}
	return keep, leaf
}

// replaceInSlices moves each failed node's pods within its domain of level
// keep (in slices of leaf pods per node when leaf > 0), one node after the
// other on what the earlier ones left.
func (t *Tree) replaceInSlices(a *kueue.TopologyAssignment, perPod resources.Requests, names map[string]bool,
	kept []Domain, lost []lostDomain, keep int, leaf int32) (*kueue.TopologyAssignment, string) {
	work := t.Clone()
	var added []Domain
	for _, d := range lost {
		domain, ok := d.node.Labels[t.levels[keep]]
		if !ok {
			domain, ok = t.domainValue(a.Levels, d.Values, keep)
		}
		if !ok {
			return nil, fmt.Sprintf("node %s is gone: the %s its pods' slices belong to is not known", d.node.Name, t.levels[keep])
		}
		allowed := func(n string) bool {
			v, ok := t.nodeValue(n, keep)
			return !names[n] && ok && v == domain
		}
		req := Request{Count: d.Count, PerPod: perPod}
		if leaf > 0 {
			req.Slices = []Slice{{Level: hostLevel, Size: leaf}}
		}
		moved, why := work.Masked(allowed).Place(req)
		if moved == nil {
			return nil, fmt.Sprintf("no room in %s %s for the %d pods of node %s: %s", t.levels[keep], domain, d.Count, d.node.Name, why)
		}
		if !slices.Equal(moved.Levels, a.Levels) {
			return nil, "the topology's levels changed since the assignment"
		}
		more, err := Domains(moved)
		if err != nil {
			return nil, err.Error()
		}
		work.Use(moved, perPod)
		added = append(added, more...)
	}
	return Encode(a.Levels, mergeDomains(kept, added)), ""
}

// hostLevel is the node label that names a node.
const hostLevel = "kubernetes.io/hostname"

// domainValue is the value of level l of the tree's domain that a domain
// of an assignment at levels names (values): read from the values when the
// assignment keeps every level, else from the tree's domain of that host
// name.
func (t *Tree) domainValue(levels, values []string, l int) (string, bool) {
	if slices.Equal(levels, t.levels) {
		return values[l], true
	}
	last := len(t.levels) - 1
	if len(values) == 0 || last < 0 {
		return "", false
	}
	leaf, ok := t.byLast[values[len(values)-1]]
	if !ok {
		return "", false
	}
	return t.values(last, leaf)[l], true
}

// nodeValue is the value of level l of a node of the tree.
func (t *Tree) nodeValue(node string, l int) (string, bool) {
	n := slices.Index(t.nodes, node)
	if n < 0 {
		return "", false
	}
	last := len(t.levels) - 1
	for d, dom := range t.doms[last] {
		if int32(n) >= dom.lo && int32(n) < dom.hi {
			return t.values(last, int32(d))[l], true
		}
	}
	return "", false
}

// mergeDomains adds the pods of b to those of a, domain by domain, in the
// order of the domains' values.
func mergeDomains(a, b []Domain) []Domain {
	byKey := map[string]*Domain{}
	var out []*Domain
	for _, list := range [][]Domain{a, b} {
		for _, d := range list {
			key := strings.Join(d.Values, keySep)
			if have, ok := byKey[key]; ok {
				have.Count += d.Count
				continue
			}
			cp := Domain{Values: slices.Clone(d.Values), Count: d.Count}
			byKey[key] = &cp
			out = append(out, &cp)
		}
	}
	slices.SortFunc(out, func(x, y *Domain) int { return slices.Compare(x.Values, y.Values) })
	merged := make([]Domain, len(out))
	for i, d := range out {
		merged[i] = *d
	}
	return merged
}
