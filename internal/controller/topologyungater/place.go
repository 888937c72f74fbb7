package topologyungater

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/kuota-dev/kuota/internal/tas"
)

// member is what placement reads of one pod of a PodSet.
type member struct {
	name string
	// gated pods wait for a domain; the others already run somewhere.
	gated bool
	// nodeSelector is the pod's own node selector.
	nodeSelector map[string]string
	// rank is the pod's position in the PodSet (from its index labels),
	// -1 when it has none.
	rank int
}

// indexing says how a pod's rank is read from its labels: rank =
// subGroupIndex*perSubGroup + index - offset.
type indexing struct {
	label, subGroupLabel string
	subGroupCount        int32
}

// rankOf reads a pod's rank among total pods; -1 when it has none (no
// index label, a value that is not a number, or out of range).
func (ix indexing) rankOf(labels map[string]string, offset, total int) int {
	if ix.label == "" {
		return -1
	}
	index, err := strconv.Atoi(labels[ix.label])
	if err != nil {
		return -1
	}
	rank := index - offset
	if ix.subGroupLabel != "" && ix.subGroupCount > 0 {
		sub, err := strconv.Atoi(labels[ix.subGroupLabel])
		if err != nil || sub < 0 || sub >= int(ix.subGroupCount) {
			return -1
		}
		rank += sub * (total / int(ix.subGroupCount))
	}
	if rank < 0 || rank >= total {
		return -1
	}
	return rank
}

// placement is the outcome for the gated pods of a PodSet.
type placement struct {
	// domain maps a gated pod to the index of its domain.
	domain map[string]int
	// unplaced maps the gated pods that get no domain to the reason.
	unplaced map[string]string
}

// place gives the gated members domains of the assignment. A running
// member counts against the domain its node selector names. Gated members
// go in rank order: each to the domain holding its rank's slot (domains
// in order, each with Count slots), so that neighbours by index share a
// domain, or when that one is full or excluded by the pod's own node
// selector, to the next domain with room; members without a rank follow
// (those whose node selector narrows their domains first, then by name)
// into the first domains with room. A member no domain has room for stays
// unplaced.
func place(levels []string, domains []tas.Domain, members []member) placement {
	room := make([]int, len(domains))
	slotEnd := make([]int, len(domains)) // cumulative slots: domain i holds [slotEnd[i-1], slotEnd[i])
	total := 0
	for i, d := range domains {
		room[i] = int(d.Count)
		total += int(d.Count)
		slotEnd[i] = total
	}
	var gated []member
	for _, m := range members {
		if m.gated {
			gated = append(gated, m)
			continue
		}
		if i := matching(levels, domains, m.nodeSelector, room); i >= 0 {
			room[i]--
		}
	}
	slices.SortFunc(gated, func(a, b member) int {
		if (a.rank < 0) != (b.rank < 0) {
			if a.rank < 0 {
				return 1
			}
			return -1
		}
		if pa, pb := pinned(levels, a.nodeSelector), pinned(levels, b.nodeSelector); pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.name, b.name))
	})
	out := placement{domain: map[string]int{}, unplaced: map[string]string{}}
	for _, m := range gated {
		start := 0
		if m.rank >= 0 {
			start, _ = slices.BinarySearch(slotEnd, m.rank+1)
		}
		i := firstWithRoom(levels, domains, m.nodeSelector, room, start)
		if i < 0 {
			out.unplaced[m.name] = fmt.Sprintf("the topology assignment has room for %d pods of the PodSet and none is left for this one", total)
			continue
		}
		room[i]--
		out.domain[m.name] = i
	}
	return out
}

// pinned reports whether a pod's own node selector names a level of the
// assignment, which narrows its choice of domains.
func pinned(levels []string, selector map[string]string) bool {
	for _, level := range levels {
		if _, ok := selector[level]; ok {
			return true
		}
	}
	return false
}

// firstWithRoom is the first domain from start on (wrapping around) that
// has room and agrees with the node selector; -1 when none.
func firstWithRoom(levels []string, domains []tas.Domain, selector map[string]string, room []int, start int) int {
	n := len(domains)
	for k := range n {
		i := (start + k) % n
		if room[i] > 0 && agrees(levels, domains[i], selector) {
			return i
		}
	}
	return -1
}

// matching is the domain with room left whose values the node selector
// names on every level; -1 when none.
func matching(levels []string, domains []tas.Domain, selector map[string]string, room []int) int {
	for i, d := range domains {
		if room[i] == 0 {
			continue
		}
		all := true
		for l, level := range levels {
			if v, ok := selector[level]; !ok || v != d.Values[l] {
				all = false
				break
			}
		}
		if all {
			return i
		}
	}
	return -1
}

// agrees reports whether a pod's node selector allows the domain: it
// names no other value for a level of the assignment.
func agrees(levels []string, d tas.Domain, selector map[string]string) bool {
	for l, level := range levels {
		if v, ok := selector[level]; ok && v != d.Values[l] {
			return false
		}
	}
	return true
}
