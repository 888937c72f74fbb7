package conversion

import (
	"encoding/json"
	"testing"

	"github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// BenchmarkConvertWorkload converts an admitted Workload of a few PodSets,
// as a v1beta1 client's read costs the manager, down and back up.
func BenchmarkConvertWorkload(b *testing.B) {
	wl := &v1beta2.Workload{}
	filler(7).Fill(wl)
	wl.TypeMeta = typeMeta("kueue.x-k8s.io/v1beta2", "Workload")
	raw, err := json.Marshal(wl)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		down, err := Convert(raw, "kueue.x-k8s.io/v1beta1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Convert(down, "kueue.x-k8s.io/v1beta2"); err != nil {
			b.Fatal(err)
		}
	}
}
