package tas

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/resources"
)

const (
	block = "cloud.provider.com/topology-block"
	rack  = "cloud.provider.com/topology-rack"
	host  = corev1.LabelHostname
)

var hostLevels = []string{block, rack, host}

// worker is a node in block b, rack r with cpus free cpu and room for 110 pods.
func worker(b, r, name string, cpus int64) Node {
	return Node{
		Name:   name,
		Labels: map[string]string{block: b, rack: r, host: name},
		Free:   resources.Requests{corev1.ResourceCPU: cpus * resources.One, corev1.ResourcePods: 110},
	}
}

// cluster: block b1 has rack r1 (8 cpus over h1, h2) and rack r2 (6 cpus
// over h3, h4); block b2 has rack r3 (2 cpus on h5).
func cluster() []Node {
	return []Node{
		worker("b1", "r1", "h1", 4), worker("b1", "r1", "h2", 4),
		worker("b1", "r2", "h3", 3), worker("b1", "r2", "h4", 3),
		worker("b2", "r3", "h5", 2),
	}
}

var oneCPU = resources.Requests{corev1.ResourceCPU: resources.One}

// render places req and shows the assignment as "value/value:count ..." or "fail: reason".
func render(t *testing.T, tree *Tree, req Request) string {
	t.Helper()
	a, why := tree.Place(req)
	if a == nil {
		return "fail: " + why
	}
	if why != "" {
		t.Errorf("assignment with a reason %q", why)
	}
	domains, err := Domains(a)
	if err != nil {
		t.Fatalf("Place gave a malformed assignment: %v", err)
	}
	var parts []string
	for _, d := range domains {
		parts = append(parts, fmt.Sprintf("%s:%d", strings.Join(d.Values, "/"), d.Count))
	}
	return strings.Join(parts, " ")
}

func TestPlace(t *testing.T) {
	gpu := corev1.ResourceName("example.com/gpu")
	withGPU := cluster()
	withGPU[2].Free = resources.Requests{corev1.ResourceCPU: 8 * resources.One, gpu: 2 * resources.One}
	withGPU[4].Free = resources.Requests{corev1.ResourceCPU: 8 * resources.One, gpu: 1 * resources.One}
	unlabelled := append(cluster(), Node{Name: "big", Labels: map[string]string{block: "b1", host: "big"},
		Free: resources.Requests{corev1.ResourceCPU: 100 * resources.One}})
	podLimited := []Node{worker("b1", "r1", "h1", 8), worker("b1", "r1", "h2", 8)}
	podLimited[0].Free[corev1.ResourcePods] = 2
	delete(podLimited[1].Free, corev1.ResourcePods)

	cases := []struct {
		name  string
		nodes []Node
		req   Request
		want  string
	}{
		{"required rack picks the tightest rack", cluster(),
			Request{Count: 5, PerPod: oneCPU, Required: rack}, "h3:3 h4:2"},
		{"required rack fails though the block fits", cluster(),
			Request{Count: 10, PerPod: oneCPU, Required: rack},
			`fail: no domain of level "cloud.provider.com/topology-rack" fits 10 pods; the largest fits 8`},
		{"required host is one node", cluster(),
			Request{Count: 2, PerPod: oneCPU, Required: host}, "h5:2"},
		{"preferred rack climbs to the block", cluster(),
			Request{Count: 10, PerPod: oneCPU, Preferred: rack}, "h1:4 h2:4 h3:2"},
		{"preferred spreads over blocks", cluster(),
			Request{Count: 15, PerPod: oneCPU, Preferred: rack}, "h1:4 h2:4 h3:3 h4:3 h5:1"},
		{"preferred fails only when the topology is full", cluster(),
			Request{Count: 17, PerPod: oneCPU, Preferred: rack}, "fail: the topology fits only 16 of 17 pods"},
		{"unconstrained fills the fullest nodes first", cluster(),
			Request{Count: 3, PerPod: oneCPU}, "h3:1 h5:2"},
		{"unconstrained fails when the topology is full", cluster(),
			Request{Count: 20, PerPod: oneCPU}, "fail: the topology fits only 16 of 20 pods"},
		{"slices stay in one rack", cluster(),
			Request{Count: 12, PerPod: oneCPU, Preferred: block, Slices: []Slice{{Level: rack, Size: 4}}}, "h1:4 h2:4 h3:3 h4:1"},
		{"slices do not split over racks", cluster(),
			Request{Count: 16, PerPod: oneCPU, Required: block, Slices: []Slice{{Level: rack, Size: 8}}},
			`fail: no domain of level "cloud.provider.com/topology-block" fits 2 slices of 8 pods; the largest fits 1`},
		{"slices per host on the fullest hosts", cluster(),
			Request{Count: 6, PerPod: oneCPU, Slices: []Slice{{Level: host, Size: 3}}}, "h3:3 h4:3"},
		{"slice count must divide", cluster(),
			Request{Count: 6, PerPod: oneCPU, Slices: []Slice{{Level: host, Size: 4}}}, "fail: 6 pods do not divide into slices of 4"},
		{"slice level above the request level", cluster(),
			Request{Count: 4, PerPod: oneCPU, Required: rack, Slices: []Slice{{Level: block, Size: 4}}},
			`fail: slice level "cloud.provider.com/topology-block" is wider than level "cloud.provider.com/topology-rack"`},
		{"an outer layer keeps the inner slices in one block", cluster(),
			Request{Count: 8, PerPod: oneCPU, Slices: []Slice{{Level: block, Size: 8}, {Level: host, Size: 2}}}, "h1:4 h2:4"},
		{"outer slices made of whole rack slices", cluster(),
			Request{Count: 12, PerPod: oneCPU, Slices: []Slice{{Level: block, Size: 12}, {Level: rack, Size: 4}}}, "h1:4 h2:4 h3:3 h4:1"},
		{"no block holds an outer slice of whole rack slices", cluster(),
			Request{Count: 16, PerPod: oneCPU, Slices: []Slice{{Level: block, Size: 16}, {Level: rack, Size: 4}}},
			"fail: the topology fits only 0 of 1 slices of 16 pods"},
		{"inner slices must divide the outer ones", cluster(),
			Request{Count: 12, PerPod: oneCPU, Slices: []Slice{{Level: block, Size: 6}, {Level: rack, Size: 4}}},
			"fail: slices of 6 pods do not divide into slices of 4"},
		{"an inner layer may not be wider", cluster(),
			Request{Count: 8, PerPod: oneCPU, Slices: []Slice{{Level: rack, Size: 4}, {Level: block, Size: 2}}},
			`fail: slice level "cloud.provider.com/topology-block" is wider than the enclosing slice level "cloud.provider.com/topology-rack"`},
		{"required block with two layers", cluster(),
			Request{Count: 8, PerPod: oneCPU, Required: block, Slices: []Slice{{Level: rack, Size: 4}, {Level: host, Size: 2}}}, "h1:4 h2:4"},
		{"nodes lacking a label are left out", unlabelled,
			Request{Count: 17, PerPod: oneCPU}, "fail: the topology fits only 16 of 17 pods"},
		{"only nodes with the resource take pods", withGPU,
			Request{Count: 3, PerPod: resources.Requests{gpu: resources.One}}, "h3:2 h5:1"},
		{"no node has the resource", cluster(),
			Request{Count: 1, PerPod: resources.Requests{"example.com/fpga": resources.One}},
			`fail: no node in the topology has resource "example.com/fpga"`},
		{"pods resource limits a node", podLimited,
			Request{Count: 10, PerPod: oneCPU, Required: rack}, "h1:2 h2:8"},
		{"unknown level", cluster(),
			Request{Count: 1, Required: "zone"},
			"fail: level \"zone\" is not in the topology (levels " + block + ", " + rack + ", " + host + ")"},
		{"no pods", cluster(), Request{Count: 0, Required: rack}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(t, NewTree(hostLevels, tc.nodes), tc.req); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestPlaceDoesNotChangeTheTree(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	req := Request{Count: 8, PerPod: oneCPU, Required: rack}
	first := render(t, tree, req)
	if second := render(t, tree, req); first != second || first != "h1:4 h2:4" {
		t.Errorf("placements %q then %q, want h1:4 h2:4 twice", first, second)
	}
}

func TestUse(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	req := Request{Count: 6, PerPod: oneCPU, Required: rack}
	a, _ := tree.Place(req)
	if got := render(t, tree, req); got != "h3:3 h4:3" {
		t.Fatalf("first placement %s", got)
	}
	clone := tree.Clone()
	clone.Use(a, oneCPU)
	if got := render(t, clone, req); got != "h1:4 h2:2" {
		t.Errorf("after Use, the same request: %s, want the other rack", got)
	}
	clone.Use(a, oneCPU) // r2 is now over-used: h3 and h4 have -3 cpu free
	if got := render(t, clone, Request{Count: 9, PerPod: oneCPU, Required: rack}); !strings.Contains(got, "the largest fits 8") {
		t.Errorf("after a second Use: %s", got)
	}
	if got := render(t, tree, req); got != "h3:3 h4:3" {
		t.Errorf("Use on a clone changed the original: %s", got)
	}
	gone := NewTree(hostLevels, cluster()[:2])
	gone.Use(a, oneCPU) // h3 and h4 are gone: nothing happens
	if got := render(t, gone, Request{Count: 8, PerPod: oneCPU}); got != "h1:4 h2:4" {
		t.Errorf("Use of missing nodes: %s", got)
	}
}

func TestAssignmentLevelsInPlacements(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	a, _ := tree.Place(Request{Count: 1, PerPod: oneCPU})
	if got := strings.Join(a.Levels, ","); got != host {
		t.Errorf("hostname lowest: levels %s", got)
	}
	levels := []string{block, rack, "example.com/node-group"}
	var nodes []Node
	for _, n := range cluster() {
		n.Labels["example.com/node-group"] = "g-" + n.Labels[rack]
		nodes = append(nodes, n)
	}
	tree = NewTree(levels, nodes)
	a, _ = tree.Place(Request{Count: 10, PerPod: oneCPU, Required: block})
	if got := strings.Join(a.Levels, ","); got != strings.Join(levels, ",") {
		t.Errorf("no hostname: levels %s", got)
	}
	// The lowest domain g-r1 holds two nodes: 8 pods fit.
	if got := render(t, tree, Request{Count: 10, PerPod: oneCPU, Required: block}); got != "b1/r1/g-r1:8 b1/r2/g-r2:2" {
		t.Errorf("no hostname: %s", got)
	}
	tree.Use(a, oneCPU)
	if got := render(t, tree, Request{Count: 5, PerPod: oneCPU}); got != "b1/r2/g-r2:3 b2/r3/g-r3:2" {
		t.Errorf("after Use: %s", got)
	}
	if got := tree.Levels(); strings.Join(got, ",") != strings.Join(levels, ",") {
		t.Errorf("Levels: %v", got)
	}
}

// Host names that repeat across racks (as on the fake nodes of Kueue's
// scalability runner: node-0, node-1 in every rack) make assignments keep
// every level, so that Use books the pods on the right rack's node.
func TestRepeatedHostNamesKeepEveryLevel(t *testing.T) {
	var nodes []Node
	for _, r := range []string{"r1", "r2"} {
		for _, h := range []string{"node-0", "node-1"} {
			n := worker("b1", r, r+"-"+h, 2)
			n.Labels[host] = h
			nodes = append(nodes, n)
		}
	}
	tree := NewTree(hostLevels, nodes)
	a, why := tree.Place(Request{Count: 4, PerPod: oneCPU, Required: rack})
	if a == nil {
		t.Fatal(why)
	}
	if got := strings.Join(a.Levels, ","); got != strings.Join(hostLevels, ",") {
		t.Fatalf("levels %s, want every level", got)
	}
	tree.Use(a, oneCPU)
	if got := render(t, tree, Request{Count: 4, PerPod: oneCPU, Required: rack}); got != "b1/r2/node-0:2 b1/r2/node-1:2" {
		t.Fatalf("after Use the other rack is free: %s", got)
	}
}

// A masked tree places only on the allowed nodes; Use of its placement on
// the unmasked tree books the same nodes.
func TestMasked(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	onlyH3 := tree.Masked(func(n string) bool { return n == "h3" })
	if got := render(t, onlyH3, Request{Count: 3, PerPod: oneCPU}); got != "h3:3" {
		t.Fatalf("masked to h3: %s", got)
	}
	if got := render(t, onlyH3, Request{Count: 4, PerPod: oneCPU}); !strings.HasPrefix(got, "fail") {
		t.Fatalf("h3 holds 3 pods: %s", got)
	}
	a, _ := onlyH3.Place(Request{Count: 3, PerPod: oneCPU})
	tree.Use(a, oneCPU)
	if got := render(t, tree, Request{Count: 4, PerPod: oneCPU, Required: rack}); got != "h1:4" {
		t.Fatalf("rack r2 has only h4's 3 CPUs left: 4 pods go to rack r1, got %s", got)
	}
	if got := render(t, tree.Clone(), Request{Count: 8, PerPod: oneCPU, Required: rack}); got != "h1:4 h2:4" {
		t.Fatalf("the unmasked tree keeps every node: %s", got)
	}
}

// Release undoes Use exactly on single-node domains, and declines on a
// domain of several nodes.
func TestRelease(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	before := render(t, tree, Request{Count: 8, PerPod: oneCPU, Required: rack})
	a, _ := tree.Place(Request{Count: 8, PerPod: oneCPU, Required: rack})
	tree.Use(a, oneCPU)
	if got := render(t, tree, Request{Count: 8, PerPod: oneCPU, Required: rack}); !strings.HasPrefix(got, "fail") {
		t.Fatalf("rack r1 is full: %s", got)
	}
	if !tree.Release(a, oneCPU) {
		t.Fatal("single-node domains release exactly")
	}
	if got := render(t, tree, Request{Count: 8, PerPod: oneCPU, Required: rack}); got != before {
		t.Fatalf("after Release %s, before Use %s", got, before)
	}
	levels := []string{block, rack}
	grouped := NewTree(levels, cluster())
	b, _ := grouped.Place(Request{Count: 3, PerPod: oneCPU, Required: rack})
	grouped.Use(b, oneCPU)
	if grouped.Release(b, oneCPU) {
		t.Fatal("a rack of two nodes cannot be released exactly")
	}
}
