package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Kueue's HAMi example (serving-workloads/sample-hami.yaml) runs
// unchanged with the transformations its page configures: the
// Deployment's pod asks for 2 vGPUs of 30 cores and 1024 MiB each, and is
// admitted charged 2 nvidia.com/gpu, 60 nvidia.com/total-gpucores and
// 2048 nvidia.com/total-gpumem.
func TestKueueHAMiExample(t *testing.T) {
	ctx := context.Background()
	objs := readExample(t, "serving-workloads/sample-hami.yaml")
	for _, obj := range objs {
		if err := suite.client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	t.Cleanup(func() {
		for i := len(objs) - 1; i >= 0; i-- {
			_ = suite.client.Delete(context.Background(), objs[i], client.PropagationPolicy("Foreground"))
		}
	})
	want := map[string]string{"nvidia.com/gpu": "2", "nvidia.com/total-gpucores": "60", "nvidia.com/total-gpumem": "2048"}
	eventually(t, 90*time.Second, "hami-queue charged for the Deployment's pod", func() error {
		var cq kueue.ClusterQueue
		if err := suite.client.Get(ctx, client.ObjectKey{Name: "hami-queue"}, &cq); err != nil {
			return err
		}
		got := map[string]resource.Quantity{}
		for _, fu := range cq.Status.FlavorsReservation {
			for _, r := range fu.Resources {
				got[string(r.Name)] = r.Total
			}
		}
		for name, q := range want {
			if g, ok := got[name]; !ok || !g.Equal(resource.MustParse(q)) {
				return fmt.Errorf("reserved %v, want %v", got, want)
			}
		}
		return nil
	})
}
