package afs

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/workload"
)

// BenchmarkOrder orders the pending workloads of one ClusterQueue under
// admission fair sharing, as every cycle does for such a queue: 10,000
// workloads over 100 LocalQueues, one shape (the cache computes a shape's
// penalty once per cycle, as here).
func BenchmarkOrder(b *testing.B) {
	ws := make([]*workload.Info, 0, 10000)
	for i := range 10000 {
		ws = append(ws, info("ns", fmt.Sprintf("lq-%d", i%100), fmt.Sprintf("w-%d", i), 0, 1))
	}
	usage := map[string]float64{}
	for i := range 100 {
		usage[fmt.Sprintf("lq-%d", i)] = float64(i % 7)
	}
	score := func(w *workload.Info) float64 { return usage[string(w.LocalQueue)] }
	penalty := 0.1 * Requests(ws[0])[corev1.ResourceCPU]
	cost := func(*workload.Info) float64 { return penalty }
	b.ReportAllocs()
	for b.Loop() {
		Order(ws, score, cost)
	}
}
