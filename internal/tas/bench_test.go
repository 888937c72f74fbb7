package tas

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/resources"
)

// benchTree has blocks × racks × hosts nodes with 32 cpus, 128Gi and 110
// pods each, partly used so capacities differ.
func benchTree(blocks, racks, hosts int) *Tree {
	var nodes []Node
	for b := range blocks {
		for r := range racks {
			for h := range hosts {
				name := fmt.Sprintf("node-%d-%d-%d", b, r, h)
				used := int64((b*7+r*3+h)%8) * 4
				nodes = append(nodes, Node{
					Name:   name,
					Labels: map[string]string{block: fmt.Sprint("block-", b), rack: fmt.Sprintf("rack-%d-%d", b, r), host: name},
					Free: resources.Requests{
						corev1.ResourceCPU:    (32 - used) * resources.One,
						corev1.ResourceMemory: (128 << 30) * resources.One,
						corev1.ResourcePods:   110,
					},
				})
			}
		}
	}
	return NewTree(hostLevels, nodes)
}

var benchPod = resources.Requests{corev1.ResourceCPU: 4 * resources.One, corev1.ResourceMemory: (8 << 30) * resources.One}

func BenchmarkPlace(b *testing.B) {
	sizes := []struct {
		name                 string
		blocks, racks, hosts int
	}{
		{"1000nodes", 5, 10, 20},
		{"10000nodes", 10, 20, 50},
	}
	requests := []struct {
		name string
		req  Request
	}{
		{"required-rack", Request{Count: 64, PerPod: benchPod, Required: rack}},
		{"preferred-rack", Request{Count: 2000, PerPod: benchPod, Preferred: rack}},
		{"unconstrained", Request{Count: 2000, PerPod: benchPod}},
		{"sliced", Request{Count: 1024, PerPod: benchPod, Preferred: block, Slices: []Slice{{Level: rack, Size: 32}}}},
	}
	for _, size := range sizes {
		tree := benchTree(size.blocks, size.racks, size.hosts)
		for _, r := range requests {
			b.Run(size.name+"/"+r.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if a, why := tree.Place(r.req); a == nil {
						b.Fatal(why)
					}
				}
			})
		}
	}
}

func BenchmarkClone(b *testing.B) {
	tree := benchTree(10, 20, 50)
	b.ReportAllocs()
	for b.Loop() {
		_ = tree.Clone()
	}
}

func BenchmarkNewTree(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = benchTree(10, 20, 50)
	}
}

func BenchmarkUse(b *testing.B) {
	tree := benchTree(10, 20, 50)
	a, why := tree.Place(Request{Count: 2000, PerPod: benchPod, Preferred: rack})
	if a == nil {
		b.Fatal(why)
	}
	b.ReportAllocs()
	for b.Loop() {
		tree.Clone().Use(a, benchPod)
	}
}
