package tas

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// show renders an assignment as Domains does, "value:count ...".
func show(t *testing.T, a *kueue.TopologyAssignment) string {
	t.Helper()
	domains, err := Domains(a)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, d := range domains {
		parts = append(parts, fmt.Sprintf("%s:%d", strings.Join(d.Values, "/"), d.Count))
	}
	return strings.Join(parts, " ")
}

// The pods of a failed node move to other nodes, within the domain the
// request requires, with the pods elsewhere kept in place.
func TestReplace(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	a, _ := tree.Place(Request{Count: 6, PerPod: oneCPU, Required: rack})
	if got := show(t, a); got != "h3:3 h4:3" {
		t.Fatalf("placement %s", got)
	}
	used := tree.Clone()
	used.Use(a, oneCPU)

	// Rack r2 has no room left for h4's 3 pods: a rack is required.
	if got, why := used.Replace(a, oneCPU, []FailedNode{{Name: "h4"}}, rack, nil); got != nil || !strings.Contains(why, "no room for the 3 pods") {
		t.Errorf("required rack without room: %v, %q", got, why)
	}
	// Anywhere: they go to rack r1.
	got, why := used.Replace(a, oneCPU, []FailedNode{{Name: "h4"}}, "", nil)
	if got == nil {
		t.Fatalf("anywhere: %s", why)
	}
	if s := show(t, got); !strings.Contains(s, "h3:3") || strings.Contains(s, "h4") || total(t, got) != 6 {
		t.Errorf("anywhere: %s, want h3's 3 pods kept and h4's 3 elsewhere", s)
	}

	// One pod per node in rack r1: the failed node's pod moves to h2 there.
	b, _ := tree.Place(Request{Count: 2, PerPod: resourcesCPU(3), Required: rack})
	if s := show(t, b); s != "h1:1 h2:1" {
		t.Fatalf("placement %s", s)
	}
	used = tree.Clone()
	used.Use(b, resourcesCPU(3))
	if got, why := used.Replace(b, resourcesCPU(1), []FailedNode{{Name: "h1"}}, rack, nil); got == nil || show(t, got) != "h2:2" {
		t.Errorf("within the rack: %v %q", got, why)
	}
	// Every pod lost: the rack that fits them best.
	if got, why := used.Replace(b, oneCPU, []FailedNode{{Name: "h1"}, {Name: "h2"}}, rack, nil); got == nil || show(t, got) != "h5:2" {
		t.Errorf("all pods lost: %v %q", got, why)
	}
	// Nothing failed: the same assignment.
	if got, _ := used.Replace(b, oneCPU, []FailedNode{{Name: "h5"}}, rack, nil); got != b {
		t.Errorf("no failed node: %v", got)
	}
}

func resourcesCPU(n int64) resources.Requests {
	return resources.Requests{corev1.ResourceCPU: n * resources.One}
}

func total(t *testing.T, a *kueue.TopologyAssignment) int32 {
	t.Helper()
	domains, err := Domains(a)
	if err != nil {
		t.Fatal(err)
	}
	n := int32(0)
	for _, d := range domains {
		n += d.Count
	}
	return n
}

// A sliced request's failed node moves its pods within its domain of the
// deepest slice level above the host name, in whole host-level slices:
// every slice-level domain keeps its count.
func TestReplaceKeepsSlices(t *testing.T) {
	nodes := []Node{
		worker("b1", "r1", "h1", 4), worker("b1", "r1", "h2", 4), worker("b1", "r1", "h3", 4),
		worker("b1", "r2", "h4", 4), worker("b1", "r2", "h5", 4),
		worker("b2", "r3", "h6", 4),
	}
	tree := NewTree(hostLevels, nodes)
	a := Encode([]string{host}, []Domain{{Values: []string{"h1"}, Count: 2}, {Values: []string{"h2"}, Count: 2}, {Values: []string{"h4"}, Count: 4}})
	used := tree.Clone()
	used.Use(a, oneCPU)
	rackOf := map[string]string{"h1": "r1", "h2": "r1", "h3": "r1", "h4": "r2", "h5": "r2", "h6": "r3"}
	check := func(name string, got *kueue.TopologyAssignment, why string, failed string, perRack map[string]int32, hostSlice int32) {
		t.Helper()
		if got == nil {
			t.Fatalf("%s: %s", name, why)
		}
		doms, err := Domains(got)
		if err != nil {
			t.Fatal(err)
		}
		racks := map[string]int32{}
		for _, d := range doms {
			h := d.Values[len(d.Values)-1]
			if h == failed || (hostSlice > 0 && d.Count%hostSlice != 0) {
				t.Errorf("%s: %s", name, show(t, got))
			}
			racks[rackOf[h]] += d.Count
		}
		for r, n := range perRack {
			if racks[r] != n {
				t.Errorf("%s: rack %s holds %d pods, want %d (%s)", name, r, racks[r], n, show(t, got))
			}
		}
	}
	racks := map[string]int32{"r1": 4, "r2": 4}
	got, why := used.Replace(a, oneCPU, []FailedNode{{Name: "h1"}}, "", []Slice{{Level: rack, Size: 4}})
	check("rack slices", got, why, "h1", racks, 0)
	got, why = used.Replace(a, oneCPU, []FailedNode{{Name: "h2"}}, "", []Slice{{Level: rack, Size: 4}, {Level: host, Size: 2}})
	check("rack slices of host slices", got, why, "h2", racks, 2)
	b := Encode([]string{host}, []Domain{{Values: []string{"h1"}, Count: 4}, {Values: []string{"h4"}, Count: 4}})
	usedB := tree.Clone()
	usedB.Use(b, oneCPU)
	got, why = usedB.Replace(b, oneCPU, []FailedNode{{Name: "h4"}}, "", []Slice{{Level: host, Size: 4}})
	check("host slices anywhere", got, why, "h4", nil, 4)

	// Rack r1 is full but for the failed node: no room where the slice is.
	full := used.Clone()
	full.Use(Encode([]string{host}, []Domain{{Values: []string{"h2"}, Count: 2}, {Values: []string{"h3"}, Count: 4}}), oneCPU)
	if got, why := full.Replace(a, oneCPU, []FailedNode{{Name: "h1"}}, "", []Slice{{Level: rack, Size: 4}}); got != nil ||
		!strings.Contains(why, "no room in "+rack+" r1") {
		t.Errorf("rack r1 full: %v %q", got, why)
	}
	// A node gone from the tree: its rack is not known, unless its last
	// labels are given.
	gone := NewTree(hostLevels, append(nodes[1:3:3], nodes[3:]...)).Clone()
	gone.Use(Encode([]string{host}, []Domain{{Values: []string{"h2"}, Count: 2}, {Values: []string{"h4"}, Count: 4}}), oneCPU)
	if got, why := gone.Replace(a, oneCPU, []FailedNode{{Name: "h1"}}, "", []Slice{{Level: rack, Size: 4}}); got != nil ||
		!strings.Contains(why, "node h1 is gone") {
		t.Errorf("a deleted node: %v %q", got, why)
	}
	withLabels := []FailedNode{{Name: "h1", Labels: map[string]string{block: "b1", rack: "r1", host: "h1"}}}
	got, why = gone.Replace(a, oneCPU, withLabels, "", []Slice{{Level: rack, Size: 4}})
	check("a deleted node with its labels", got, why, "h1", racks, 0)
}

// runnerNodes builds nodes as Kueue's scalability runner named them: node
// names unique (node-b1-r1-n0), host names not (node-0, node-1 in every
// rack), 2 cpus each.
func runnerNodes(racks ...string) []Node {
	var nodes []Node
	for _, r := range racks {
		for _, h := range []string{"node-0", "node-1"} {
			n := worker("b1", r, "node-b1-"+r+"-n"+h[len(h)-1:], 2)
			n.Labels[host] = h
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// Under host names that are not node names and repeat across racks, a
// failed node is found in an assignment by its labels: its own pods move,
// and those on the node of the same host name in another rack stay.
func TestReplaceFindsNodesByTheirLabels(t *testing.T) {
	nodes := runnerNodes("r1", "r2")
	tree := NewTree(hostLevels, nodes)
	a := Encode(hostLevels, []Domain{{Values: []string{"b1", "r1", "node-0"}, Count: 1}, {Values: []string{"b1", "r2", "node-0"}, Count: 1}})
	used := tree.Clone()
	used.Use(a, oneCPU)
	failed := []FailedNode{{Name: nodes[2].Name, Labels: nodes[2].Labels}} // node-b1-r2-n0
	got, why := used.Replace(a, oneCPU, failed, "", nil)
	if got == nil {
		t.Fatal(why)
	}
	if s := show(t, got); !strings.Contains(s, "b1/r1/node-0:") || strings.Contains(s, "b1/r2/node-0") || total(t, got) != 2 {
		t.Errorf("replaced %s, want r1's node-0 kept and r2's node-0 moved", s)
	}
	// A failed node of another rack than the pods' is none of theirs.
	other := []FailedNode{{Name: "node-b1-r3-n1", Labels: map[string]string{block: "b1", rack: "r3", host: "node-1"}}}
	if got, _ := used.Replace(a, oneCPU, other, "", nil); got != a {
		t.Errorf("a node of rack r3 moved pods of racks r1 and r2: %s", show(t, got))
	}

	// Sliced by rack: the pods of a failed node that is not ready (not in
	// the tree) stay in its rack, read from its labels.
	ready := NewTree(hostLevels, append(nodes[:2:2], nodes[3:]...))
	b := Encode(hostLevels, []Domain{{Values: []string{"b1", "r2", "node-0"}, Count: 1}, {Values: []string{"b1", "r2", "node-1"}, Count: 1}})
	usedB := ready.Clone()
	usedB.Use(Encode(hostLevels, []Domain{{Values: []string{"b1", "r2", "node-1"}, Count: 1}}), oneCPU)
	got, why = usedB.Replace(b, oneCPU, failed, "", []Slice{{Level: rack, Size: 2}})
	if got == nil {
		t.Fatal(why)
	}
	if s := show(t, got); s != "b1/r2/node-1:2" {
		t.Errorf("sliced replacement %s, want both pods on r2's other node", s)
	}
}

// NodeInDomain reads a node's labels at the assignment's levels, and its
// name for a host name it does not carry.
func TestNodeInDomain(t *testing.T) {
	labels := map[string]string{block: "b1", rack: "r2", host: "node-0"}
	for _, c := range []struct {
		name           string
		labels         map[string]string
		levels, values []string
		want           bool
	}{
		{"node-b1-r2-n0", labels, hostLevels, []string{"b1", "r2", "node-0"}, true},
		{"node-b1-r2-n0", labels, hostLevels, []string{"b1", "r1", "node-0"}, false},
		{"node-b1-r2-n0", labels, []string{host}, []string{"node-0"}, true},
		{"node-b1-r2-n0", labels, []string{host}, []string{"node-b1-r2-n0"}, false},
		{"h1", nil, []string{host}, []string{"h1"}, true},
		{"h1", map[string]string{rack: "r1"}, []string{rack, host}, []string{"r1", "h1"}, true},
		{"h1", nil, []string{rack, host}, []string{"r1", "h1"}, false},
		{"h1", nil, []string{host}, []string{"r1", "h1"}, false},
	} {
		if got := NodeInDomain(c.name, c.labels, c.levels, c.values); got != c.want {
			t.Errorf("NodeInDomain(%s, %v, %v, %v) = %v, want %v", c.name, c.labels, c.levels, c.values, got, c.want)
		}
	}
}
