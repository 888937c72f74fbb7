package tas

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Limits of the compact encoding, as the API validates them.
const (
	maxSlices = 1000   // slices per assignment
	maxRoots  = 100000 // domains (roots, pod counts) per slice
)

// Domain is one lowest-level domain of an assignment and its pod count.
type Domain struct {
	Values []string // one label value per level of the assignment, widest first
	Count  int32
}

// AssignmentLevels returns the levels an assignment stores for a Topology
// with these levels: only kubernetes.io/hostname when it is the lowest level
// (a host name identifies its domain), otherwise all of them.
func AssignmentLevels(topologyLevels []string) []string {
	if n := len(topologyLevels); n > 0 && topologyLevels[n-1] == corev1.LabelHostname {
		return []string{corev1.LabelHostname}
	}
	return slices.Clone(topologyLevels)
}

// Encode builds the compact v1beta2 TopologyAssignment for domains (in the given order).
//
// Consecutive domains sharing the values of all but the last level form one
// slice (at most maxRoots domains each). Should that give more than
// maxSlices slices, the domains are instead cut into chunks of maxRoots. In
// a slice, a level whose values are all equal is universal; otherwise it is
// individual, with the longest common prefix and suffix taken out of the
// roots (each root keeps at least one character). Pod counts are universal
// when all equal. Every Domain.Values should hold len(levels) values.
func Encode(levels []string, domains []Domain) *kueue.TopologyAssignment {
	a := &kueue.TopologyAssignment{
		Levels: slices.Clone(levels),
		Slices: []kueue.TopologyAssignmentSlice{},
	}
	runs := runsByParent(len(levels), domains)
	if len(runs) > maxSlices {
		runs = chunks(len(domains))
	}
	for _, r := range runs {
		a.Slices = append(a.Slices, encodeSlice(len(levels), domains[r[0]:r[1]]))
	}
	return a
}

// Domains expands an assignment back into its domains, in order; it returns an error naming the field
// (e.g. "slices[2].podCounts.individual: 3 entries, domainCount 4") when the assignment is malformed.
// A nil assignment has no domains.
func Domains(a *kueue.TopologyAssignment) ([]Domain, error) {
	if a == nil {
		return nil, nil
	}
	if len(a.Levels) == 0 {
		return nil, fmt.Errorf("levels: none")
	}
	if len(a.Slices) > maxSlices {
		return nil, fmt.Errorf("slices: %d entries, at most %d", len(a.Slices), maxSlices)
	}
	var out []Domain
	for i := range a.Slices {
		s := &a.Slices[i]
		if err := checkSlice(len(a.Levels), s); err != nil {
			return nil, fmt.Errorf("slices[%d].%w", i, err)
		}
		for k := range int(s.DomainCount) {
			d := Domain{Values: make([]string, len(a.Levels))}
			for l, v := range s.ValuesPerLevel {
				if v.Universal != nil {
					d.Values[l] = *v.Universal
				} else {
					d.Values[l] = deref(v.Individual.Prefix) + v.Individual.Roots[k] + deref(v.Individual.Suffix)
				}
			}
			if s.PodCounts.Universal != nil {
				d.Count = *s.PodCounts.Universal
			} else {
				d.Count = s.PodCounts.Individual[k]
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// Nodes returns the host names (kubernetes.io/hostname values) an
// assignment at the hostname level places pods on, in order (nil for an
// assignment at another level, or a malformed one). A host name is not
// always the node's name, nor unique across racks (the assignment then
// keeps every level): NodeInDomain says which node a domain is.
func Nodes(a *kueue.TopologyAssignment) []string {
	domains := HostDomains(a)
	if domains == nil {
		return nil
	}
	out := make([]string, len(domains))
	for i, d := range domains {
		out[i] = d.Values[len(d.Values)-1]
	}
	return out
}

// HostDomains returns the domains of an assignment at the hostname level,
// each naming one node (nil for an assignment at another level, or a
// malformed one).
func HostDomains(a *kueue.TopologyAssignment) []Domain {
	if a == nil || len(a.Levels) == 0 || a.Levels[len(a.Levels)-1] != corev1.LabelHostname {
		return nil
	}
	domains, err := Domains(a)
	if err != nil {
		return nil
	}
	return domains
}

// NodeInDomain reports whether a node, by name and labels, is the one a
// domain of an assignment at levels (values, widest first) names: its
// labels carry the domain's values. A node without a host name label (or
// whose labels are not known) is read by its name at that level.
func NodeInDomain(name string, labels map[string]string, levels, values []string) bool {
	if len(levels) != len(values) {
		return false
	}
	for i, level := range levels {
		v, ok := labels[level]
		if !ok && level == corev1.LabelHostname {
			v, ok = name, true
		}
		if !ok || v != values[i] {
			return false
		}
	}
	return true
}

// checkSlice reports the first malformed field of s, relative to the slice.
func checkSlice(nLevels int, s *kueue.TopologyAssignmentSlice) error {
	n := int(s.DomainCount)
	if n < 1 || n > maxRoots {
		return fmt.Errorf("domainCount: %d, want 1 to %d", n, maxRoots)
	}
	if len(s.ValuesPerLevel) != nLevels {
		return fmt.Errorf("valuesPerLevel: %d entries, %d levels", len(s.ValuesPerLevel), nLevels)
	}
	for l, v := range s.ValuesPerLevel {
		if (v.Universal == nil) == (v.Individual == nil) {
			return fmt.Errorf("valuesPerLevel[%d]: set exactly one of universal and individual", l)
		}
		if v.Individual != nil && len(v.Individual.Roots) != n {
			return fmt.Errorf("valuesPerLevel[%d].individual.roots: %d entries, domainCount %d", l, len(v.Individual.Roots), n)
		}
	}
	pc := s.PodCounts
	if (pc.Universal == nil) == (pc.Individual == nil) {
		return fmt.Errorf("podCounts: set exactly one of universal and individual")
	}
	if pc.Universal != nil && *pc.Universal < 1 {
		return fmt.Errorf("podCounts.universal: %d, want at least 1", *pc.Universal)
	}
	if pc.Individual != nil && len(pc.Individual) != n {
		return fmt.Errorf("podCounts.individual: %d entries, domainCount %d", len(pc.Individual), n)
	}
	for k, c := range pc.Individual {
		if c < 1 {
			return fmt.Errorf("podCounts.individual[%d]: %d, want at least 1", k, c)
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// runsByParent returns [start, end) ranges of consecutive domains sharing
// the values of all levels but the last, cut at maxRoots domains.
func runsByParent(nLevels int, domains []Domain) [][2]int {
	var runs [][2]int
	start := 0
	for i := 1; i <= len(domains); i++ {
		if i < len(domains) && i-start < maxRoots && sameParent(nLevels, domains[start], domains[i]) {
			continue
		}
		runs = append(runs, [2]int{start, i})
		start = i
	}
	return runs
}

func sameParent(nLevels int, a, b Domain) bool {
	for l := 0; l < nLevels-1; l++ {
		if value(a, l) != value(b, l) {
			return false
		}
	}
	return true
}

func chunks(n int) [][2]int {
	var runs [][2]int
	for start := 0; start < n; start += maxRoots {
		runs = append(runs, [2]int{start, min(start+maxRoots, n)})
	}
	return runs
}

// value returns the value of level l of d, or "" when d lacks it.
func value(d Domain, l int) string {
	if l < len(d.Values) {
		return d.Values[l]
	}
	return ""
}

func encodeSlice(nLevels int, domains []Domain) kueue.TopologyAssignmentSlice {
	s := kueue.TopologyAssignmentSlice{
		DomainCount:    int32(len(domains)),
		ValuesPerLevel: make([]kueue.TopologyAssignmentSliceLevelValues, nLevels),
	}
	values := make([]string, len(domains))
	for l := range nLevels {
		for i, d := range domains {
			values[i] = value(d, l)
		}
		s.ValuesPerLevel[l] = encodeLevel(values)
	}
	counts := make([]int32, len(domains))
	for i, d := range domains {
		counts[i] = d.Count
	}
	if allEqual(counts) {
		c := counts[0]
		s.PodCounts.Universal = &c
	} else {
		s.PodCounts.Individual = counts
	}
	return s
}

func encodeLevel(values []string) kueue.TopologyAssignmentSliceLevelValues {
	if allEqual(values) {
		v := values[0]
		return kueue.TopologyAssignmentSliceLevelValues{Universal: &v}
	}
	prefix, suffix := commonEnds(values)
	ind := &kueue.TopologyAssignmentSliceLevelIndividualValues{Roots: make([]string, len(values))}
	for i, v := range values {
		ind.Roots[i] = v[len(prefix) : len(v)-len(suffix)]
	}
	if prefix != "" {
		ind.Prefix = &prefix
	}
	if suffix != "" {
		ind.Suffix = &suffix
	}
	return kueue.TopologyAssignmentSliceLevelValues{Individual: ind}
}

// commonEnds returns the longest common prefix of values and then the
// longest common suffix of what remains, leaving every value at least one
// character between them (when it had one).
func commonEnds(values []string) (prefix, suffix string) {
	shortest := len(values[0])
	for _, v := range values {
		shortest = min(shortest, len(v))
	}
	room := max(shortest-1, 0)
	p := 0
	for p < room && sameByte(values, func(v string) byte { return v[p] }) {
		p++
	}
	s := 0
	for p+s < room && sameByte(values, func(v string) byte { return v[len(v)-1-s] }) {
		s++
	}
	first := values[0]
	return first[:p], first[len(first)-s:]
}

func sameByte(values []string, at func(string) byte) bool {
	b := at(values[0])
	for _, v := range values[1:] {
		if at(v) != b {
			return false
		}
	}
	return true
}

func allEqual[T comparable](xs []T) bool {
	for _, x := range xs[1:] {
		if x != xs[0] {
			return false
		}
	}
	return true
}
