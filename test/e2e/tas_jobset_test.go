package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetapi "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/integrations/jobset"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/tas"
)

// Kueue's topology-aware JobSet examples run unchanged with JobSet's real
// controller on the example topology (LocalQueue user-queue pointing at
// sample-queues.yaml's ClusterQueue): required keeps its pods in one rack;
// sliced puts each slice of 4 pods in one rack; combined does both within
// one block. The pods run where the assignment says.
func TestKueueJobSetTopologyExamples(t *testing.T) {
	if suite.jobSet.skip != "" {
		t.Skip("JobSet controller not available: " + suite.jobSet.skip)
	}
	ctx := context.Background()
	applyExample(t, "tas/sample-queues.yaml")
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "user-queue"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: "tas-cluster-queue"}}
	create(t, lq)
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), lq) })
	nodes := nodeLabels(t)
	cases := []struct {
		file string
		// oneOf is the level all pods share ("" for none); slice the pods
		// each rack holds a multiple of (0: any).
		oneOf string
		slice int
	}{
		{"jobs/sample-jobset-tas-required.yaml", tasRackLabel, 0},
		{"jobs/sample-jobset-tas-sliced.yaml", "", 4},
		{"jobs/sample-jobset-tas-combined.yaml", tasBlockLabel, 4},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			var js jobsetapi.JobSet
			if err := runtimeFromUnstructured(readExample(t, c.file)[0], &js); err != nil {
				t.Fatal(err)
			}
			js.Namespace = "default"
			create(t, &js)
			t.Cleanup(func() {
				_ = suite.client.Delete(context.Background(), &js, client.PropagationPolicy("Background"))
			})
			eventually(t, 2*time.Minute, "the JobSet completed", func() error {
				var got jobsetapi.JobSet
				if err := suite.client.Get(ctx, client.ObjectKeyFromObject(&js), &got); err != nil {
					return err
				}
				if meta.IsStatusConditionTrue(got.Status.Conditions, string(jobsetapi.JobSetCompleted)) {
					return nil
				}
				return fmt.Errorf("status %+v", got.Status.ReplicatedJobsStatus)
			})
			var wl kueue.Workload
			key := client.ObjectKey{Namespace: js.Namespace, Name: jobframework.WorkloadName(js.Name, js.UID, jobset.GVK)}
			if err := suite.client.Get(ctx, key, &wl); err != nil {
				t.Fatal(err)
			}
			if wl.Status.Admission == nil || wl.Status.Admission.PodSetAssignments[0].TopologyAssignment == nil {
				t.Fatalf("admitted without a topology assignment: %+v", wl.Status.Admission)
			}
			doms, err := tas.Domains(wl.Status.Admission.PodSetAssignments[0].TopologyAssignment)
			if err != nil {
				t.Fatal(err)
			}
			perRack, shared := map[string]int32{}, map[string]bool{}
			for _, d := range doms {
				labels := nodes[d.Values[len(d.Values)-1]]
				perRack[labels[tasBlockLabel]+"/"+labels[tasRackLabel]] += d.Count
				if c.oneOf != "" {
					shared[labels[c.oneOf]] = true
				}
			}
			if c.oneOf != "" && len(shared) != 1 {
				t.Errorf("pods assigned to %d values of %s (%v), want one", len(shared), c.oneOf, shared)
			}
			for rack, n := range perRack {
				if c.slice > 0 && int(n)%c.slice != 0 {
					t.Errorf("rack %s holds %d pods, not whole slices of %d: %v", rack, n, c.slice, perRack)
				}
			}
			var pods corev1.PodList
			if err := suite.client.List(ctx, &pods, client.InNamespace(js.Namespace),
				client.MatchingLabels{jobsetapi.JobSetNameKey: js.Name}); err != nil {
				t.Fatal(err)
			}
			for _, p := range pods.Items {
				if host := p.Spec.NodeSelector[corev1.LabelHostname]; host == "" || host != p.Spec.NodeName {
					t.Errorf("pod %s: node selector %v, ran on %s", p.Name, p.Spec.NodeSelector, p.Spec.NodeName)
				}
			}
		})
	}
}
