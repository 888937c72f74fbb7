package tasungater

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/controller/topologyungater"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/tas"
	"github.com/kuota-dev/kuota/internal/testutil"
	"github.com/kuota-dev/kuota/test/integration/framework"
)

const rackLabel = "example.com/topology-rack"

// startUngater runs a manager with only the topology ungater until the
// test ends.
func startUngater(t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topologyungater.Setup(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// TestUngaterPlacesGatedPodsOnTheirRacks: a Workload of 4 pods admitted
// with 2 pods on rack a and 2 on rack b; its pods are created gated, in
// an order unrelated to their completion indexes. Each gets the node
// selector of the rack its index falls in and loses the gate; a fifth
// pod, beyond the assignment, stays gated.
func TestUngaterPlacesGatedPodsOnTheirRacks(t *testing.T) {
	ctx := context.Background()
	startUngater(t)
	ns, err := env.CreateNamespace(ctx, "ungater")
	if err != nil {
		t.Fatal(err)
	}
	index := "batch.kubernetes.io/job-completion-index"
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: ns},
		Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 4,
			TopologyRequest: &kueue.PodSetTopologyRequest{Required: ptr.To(rackLabel), PodIndexLabel: ptr.To(index)},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "img", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}}
	if err := env.Client.Create(ctx, wl); err != nil {
		t.Fatal(err)
	}
	assignment := tas.Encode([]string{rackLabel}, []tas.Domain{{Values: []string{"a"}, Count: 2}, {Values: []string{"b"}, Count: 2}})
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main",
		Flavors:            map[corev1.ResourceName]kueue.ResourceFlavorReference{corev1.ResourceCPU: "tas"},
		ResourceUsage:      corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
		Count:              ptr.To[int32](4),
		TopologyAssignment: assignment}}}
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
		Message: "test", LastTransitionTime: metav1.Now()}, {Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted",
		Message: "test", LastTransitionTime: metav1.Now()}}
	if err := env.Client.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, idx := range []int{2, 0, 3, 1, 4} {
		name := fmt.Sprintf("p%d", i)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{jobframework.PodSetLabel: "main", jobframework.TASLabel: "true", index: fmt.Sprint(idx)},
			Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, NodeSelector: map[string]string{"pool": "tas"},
				SchedulingGates: []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}, {Name: "example.com/other"}},
				Containers:      []corev1.Container{{Name: "c", Image: "img"}}}}
		if err := env.Client.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		want[name] = map[int]string{0: "a", 1: "a", 2: "b", 3: "b", 4: "gated"}[idx]
	}
	testutil.Eventually(t, 30*time.Second, 100*time.Millisecond, "pods placed on their racks", func() error {
		for name, r := range want {
			var p corev1.Pod
			if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &p); err != nil {
				return err
			}
			got := p.Spec.NodeSelector[rackLabel]
			if jobframework.HasTopologyGate(&p) {
				got = "gated"
			}
			if got != r {
				return fmt.Errorf("pod %s: %s, want %s (node selector %v, gates %v)", name, got, r, p.Spec.NodeSelector, p.Spec.SchedulingGates)
			}
			if p.Spec.NodeSelector["pool"] != "tas" || len(p.Spec.SchedulingGates) == 0 || p.Spec.SchedulingGates[0].Name == "" {
				return fmt.Errorf("pod %s lost its own node selector or gates: %v %v", name, p.Spec.NodeSelector, p.Spec.SchedulingGates)
			}
		}
		return nil
	})
	// The pod left over has a Warning event saying why.
	testutil.Eventually(t, 30*time.Second, 200*time.Millisecond, "a warning on the pod left over", func() error {
		var events corev1.EventList
		if err := env.Client.List(ctx, &events); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == "p4" && e.InvolvedObject.Namespace == ns && e.Reason == topologyungater.ReasonNoDomain && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("no %s event on p4 among %d events", topologyungater.ReasonNoDomain, len(events.Items))
	})
}

// TestManagerStartsWithTheUngater: the manager wires the ungater (and its
// pod cache) and starts and stops cleanly with it.
func TestManagerStartsWithTheUngater(t *testing.T) {
	cfg, err := framework.ManagerConfig()
	if err != nil {
		t.Fatal(err)
	}
	m, err := env.StartManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
}
