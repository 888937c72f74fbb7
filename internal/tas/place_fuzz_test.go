package tas

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

const gpu = corev1.ResourceName("example.com/gpu")

// fuzzTree builds a small random tree: blocks, racks and a lowest level that
// is the host name or a shared group label; some nodes lack labels or resources.
func fuzzTree(b *bytesReader) *Tree {
	levels := []string{block, rack, host}
	if b.next()%2 == 0 {
		levels = []string{block, "example.com/group"}
	}
	nodes := make([]Node, b.next()%30)
	for i := range nodes {
		n := &nodes[i]
		n.Name = fmt.Sprint("n", i)
		n.Labels = map[string]string{block: fmt.Sprint("b", b.next()%3), rack: fmt.Sprint("r", b.next()%3),
			host: n.Name, "example.com/group": fmt.Sprint("g", b.next()%4)}
		if b.next()%16 == 0 {
			delete(n.Labels, block)
		}
		n.Free = resources.Requests{}
		if v := b.next(); v%8 != 0 {
			n.Free[corev1.ResourceCPU] = int64(v%10-1) * 500
		}
		if v := b.next(); v%3 == 0 {
			n.Free[gpu] = int64(v%4) * resources.One
		}
		if v := b.next(); v%2 == 0 {
			n.Free[corev1.ResourcePods] = int64(v % 6)
		}
	}
	return NewTree(levels, nodes)
}

func fuzzRequest(b *bytesReader, levels []string) Request {
	req := Request{Count: int32(b.next() % 30), PerPod: resources.Requests{corev1.ResourceCPU: int64(b.next()%4) * 500}}
	if b.next()%4 == 0 {
		req.PerPod[gpu] = resources.One
	}
	level := levels[b.next()%len(levels)]
	switch b.next() % 3 {
	case 0:
		req.Required = level
	case 1:
		req.Preferred = level
	}
	if b.next()%3 == 0 {
		// Up to three layers; the checks of Place refuse the ill-formed ones.
		for n := 1 + b.next()%3; n > 0; n-- {
			req.Slices = append(req.Slices, Slice{Level: levels[b.next()%len(levels)], Size: int32(b.next() % 5)})
		}
	}
	return req
}

func FuzzPlace(f *testing.F) {
	f.Add([]byte("\x01\x07\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x05\x03\x01\x00\x00"))
	f.Add([]byte("\x00\x1d\x09\x08\x07\x06\x05\x04\x03\x02\x01\x09\x08\x07\x06\x05\x04\x03\x02\x01\x0c\x01\x01\x01\x01\x00\x01\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &bytesReader{data: data}
		tree := fuzzTree(b)
		if b.next()%2 == 0 { // start from a tree with something placed
			if a, _ := tree.Place(fuzzRequest(b, tree.levels)); a != nil {
				tree.Use(a, resources.Requests{corev1.ResourceCPU: 500})
			}
		}
		req := fuzzRequest(b, tree.levels)
		a, why := tree.Place(req)
		again, _ := tree.Place(req)
		if !reflect.DeepEqual(a, again) {
			t.Fatalf("two placements differ: %v and %v", a, again)
		}
		if a == nil {
			if why == "" {
				t.Fatal("no assignment and no reason")
			}
			if req.Required == "" && len(req.Slices) == 0 && len(tree.levels) > 0 && totalFit(tree, req) >= int64(req.Count) {
				t.Fatalf("%d pods fit in the topology, yet: %s", req.Count, why)
			}
			return
		}
		checkPlacement(t, tree, req, a.Levels, mustDomains(t, a))
		before := slices.Clone(tree.free)
		used := tree.Clone()
		used.Use(a, req.PerPod)
		for i, free := range used.free {
			if before[i] >= 0 && free < 0 {
				t.Fatalf("Use overdrew node %s: %d -> %d", tree.nodes[i/len(tree.names)], before[i], free)
			}
		}
	})
}

func totalFit(tree *Tree, req Request) int64 {
	pod := tree.podRequest(req.PerPod)
	var total int64
	for n := range tree.nodes {
		total += tree.fit(n, &pod)
	}
	return total
}

func mustDomains(t *testing.T, a *kueue.TopologyAssignment) []Domain {
	t.Helper()
	domains, err := Domains(a)
	if err != nil {
		t.Fatalf("malformed assignment: %v", err)
	}
	return domains
}

// checkPlacement checks what any placement must hold: Count pods in all,
// within each domain's capacity, under one domain of a required level, and
// whole slices of every layer in each domain of that layer's level.
func checkPlacement(t *testing.T, tree *Tree, req Request, levels []string, domains []Domain) {
	t.Helper()
	find := tree.finder(levels)
	if find == nil {
		t.Fatalf("assignment levels %v do not fit the tree %v", levels, tree.levels)
	}
	pod := tree.podRequest(req.PerPod)
	last := len(tree.levels) - 1
	var total int64
	seen := map[int32]bool{}
	under := map[string]bool{}
	slicePods := make([]map[string]int64, len(req.Slices))
	for i := range slicePods {
		slicePods[i] = map[string]int64{}
	}
	for _, d := range domains {
		leaf, ok := find(d.Values)
		if !ok || seen[leaf] {
			t.Fatalf("domain %v unknown or repeated", d.Values)
		}
		seen[leaf] = true
		total += int64(d.Count)
		dom := tree.doms[last][leaf]
		var fits int64
		for n := dom.lo; n < dom.hi; n++ {
			fits += tree.fit(int(n), &pod)
		}
		if int64(d.Count) > fits {
			t.Fatalf("domain %v gets %d pods, fits %d", d.Values, d.Count, fits)
		}
		values := tree.values(last, leaf)
		if req.Required != "" {
			under[fmt.Sprint(values[:slices.Index(tree.levels, req.Required)+1])] = true
		}
		for i, s := range req.Slices {
			slicePods[i][fmt.Sprint(values[:slices.Index(tree.levels, s.Level)+1])] += int64(d.Count)
		}
	}
	if total != int64(req.Count) {
		t.Fatalf("placed %d pods, want %d", total, req.Count)
	}
	if len(under) > 1 {
		t.Fatalf("required level %s: pods under %d domains", req.Required, len(under))
	}
	for i, s := range req.Slices {
		for key, n := range slicePods[i] {
			if n%int64(s.Size) != 0 {
				t.Fatalf("layer %d: domain %s of level %s holds %d pods, slices of %d", i, key, s.Level, n, s.Size)
			}
		}
	}
}
