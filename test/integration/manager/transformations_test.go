package manager

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// Kueue's shared-quota example, unchanged, with the transformation its
// page configures (one cpu_credits per CPU, the CPU kept): the
// ClusterQueue has 18 CPUs over two flavors but 14 credits, so of five
// 3-CPU workloads four are admitted, each charged 3 credits, and the fifth
// waits for credits although CPUs are free.
func TestTransformationsShareQuotaAcrossFlavors(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.Resources = &configapi.Resources{Transformations: []configapi.ResourceTransformation{{
			Input: corev1.ResourceCPU, Strategy: ptr.To(configapi.Retain),
			Outputs: corev1.ResourceList{"cpu_credits": resource.MustParse("1")}}}}
	})
	ctx := context.Background()
	for _, e := range testutil.KueueExamples(t, kueue.GroupVersion.Group, func(string) bool { return true }) {
		if e.File != "admin/shared-quota-setup.yaml" {
			continue
		}
		if err := env.Client.Create(ctx, e.Obj); err != nil {
			t.Fatalf("creating %s %s: %v", e.Obj.GetKind(), e.Obj.GetName(), err)
		}
		obj := e.Obj
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
	ns, cq := "default", "team-cluster-queue"
	var names []string
	for i := range 5 {
		name := fmt.Sprintf("credits-%d", i)
		names = append(names, name)
		wl := newWorkload(ns, name, "team-queue", 1, "3", 0)
		create(t, wl)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), wl) })
	}
	var pending []string
	eventually(t, 45*time.Second, "four workloads admitted", func() error {
		pending = pendingOf(t, ns, names...)
		if len(pending) != 1 {
			return fmt.Errorf("pending: %v", pending)
		}
		return nil
	})
	stayAdmitted(t, ns, slicesWithout(names, pending[0])...)
	eventually(t, 45*time.Second, "the pending workload says it waits for cpu_credits", func() error {
		if msg := quotaReservedMessage(getWorkload(t, ns, pending[0])); !strings.Contains(msg, "cpu_credits") {
			return fmt.Errorf("QuotaReserved message %q", msg)
		}
		return nil
	})
	admitted := getWorkload(t, ns, slicesWithout(names, pending[0])[0])
	var credits resource.Quantity
	for _, psa := range admitted.Status.Admission.PodSetAssignments {
		credits = psa.ResourceUsage["cpu_credits"]
		if psa.Flavors["cpu_credits"] != "credits" {
			t.Errorf("cpu_credits assigned flavor %q, want credits", psa.Flavors["cpu_credits"])
		}
	}
	if !credits.Equal(resource.MustParse("3")) {
		t.Errorf("an admitted workload is charged %s cpu_credits, want 3", credits.String())
	}
	waitQueueStatus(t, cq, func(st *kueue.ClusterQueueStatus) error {
		for _, fu := range st.FlavorsReservation {
			for _, r := range fu.Resources {
				if r.Name == "cpu_credits" && r.Total.Equal(resource.MustParse("12")) {
					return nil
				}
			}
		}
		return fmt.Errorf("cpu_credits reservation not 12: %+v", st.FlavorsReservation)
	})
}

func slicesWithout(names []string, drop string) []string {
	var out []string
	for _, n := range names {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}

func quotaReservedMessage(wl *kueue.Workload) string {
	for _, c := range wl.Status.Conditions {
		if c.Type == kueue.WorkloadQuotaReserved {
			return c.Message
		}
	}
	return ""
}
