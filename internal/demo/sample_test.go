package demo

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/paths"
)

// sampleObjects reads config/samples/demo-setup.yaml into raw documents
// by kind.
func sampleObjects(t *testing.T) map[string][][]byte {
	t.Helper()
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, SetupFile))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][][]byte{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var u unstructured.Unstructured
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if u.Object == nil {
			continue
		}
		out[u.GetKind()] = append(out[u.GetKind()], doc)
	}
}

func decode[T any](t *testing.T, docs [][]byte) []T {
	t.Helper()
	var out []T
	for _, d := range docs {
		var v T
		if err := yaml.UnmarshalStrict(d, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// The demo's code names teams, queues, flavors and priorities; the sample
// setup must define them.
func TestSampleSetupMatchesTheDemo(t *testing.T) {
	docs := sampleObjects(t)
	for _, fl := range decode[kueue.ResourceFlavor](t, docs["ResourceFlavor"]) {
		if fl.Spec.NodeLabels[GPULabel] != fl.Name || !slices.Contains(GPUKinds, fl.Name) {
			t.Errorf("flavor %s selects %v", fl.Name, fl.Spec.NodeLabels)
		}
	}
	if n := len(docs["ResourceFlavor"]); n != len(GPUKinds) {
		t.Errorf("%d flavors", n)
	}
	cohorts := decode[kueue.Cohort](t, docs["Cohort"])
	if len(cohorts) != 1 {
		t.Fatalf("%d cohorts", len(cohorts))
	}
	cqs := decode[kueue.ClusterQueue](t, docs["ClusterQueue"])
	var gpus int64
	for _, team := range Teams {
		i := slices.IndexFunc(cqs, func(cq kueue.ClusterQueue) bool { return cq.Name == team.ClusterQueue })
		if i < 0 {
			t.Fatalf("no ClusterQueue %s", team.ClusterQueue)
		}
		cq := &cqs[i]
		if string(cq.Spec.CohortName) != cohorts[0].Name {
			t.Errorf("%s: cohort %q", cq.Name, cq.Spec.CohortName)
		}
		if p := cq.Spec.Preemption; p == nil || p.WithinClusterQueue != kueue.PreemptionPolicyLowerPriority || p.ReclaimWithinCohort != kueue.PreemptionPolicyAny {
			t.Errorf("%s: preemption %+v", cq.Name, p)
		}
		quota, order := gpuQuota(cq)
		if !slices.Equal(order, GPUKinds) {
			t.Errorf("%s: GPU flavors %v, want %v (a100 first)", cq.Name, order, GPUKinds)
		}
		for _, fl := range order {
			if quota[fl] < MaxGPUsPerJob {
				t.Errorf("%s: %d GPUs of %s, less than a Job of the demo may need", cq.Name, quota[fl], fl)
			}
			gpus += quota[fl]
		}
		if covered := cq.Spec.ResourceGroups[0].CoveredResources; !slices.Contains(covered, corev1.ResourceCPU) || !slices.Contains(covered, GPUResource) {
			t.Errorf("%s: covers %v", cq.Name, covered)
		}
	}
	if gpus != CapacityGPUs() {
		t.Errorf("the queues' quotas add up to %d GPUs, the cluster has %d", gpus, CapacityGPUs())
	}
	lqs := decode[kueue.LocalQueue](t, docs["LocalQueue"])
	for _, team := range Teams {
		if !slices.ContainsFunc(lqs, func(lq kueue.LocalQueue) bool {
			return lq.Namespace == team.Namespace && lq.Name == team.LocalQueue && string(lq.Spec.ClusterQueue) == team.ClusterQueue
		}) {
			t.Errorf("no LocalQueue %s/%s for ClusterQueue %s", team.Namespace, team.LocalQueue, team.ClusterQueue)
		}
	}
	values := map[string]int32{}
	for _, pc := range decode[kueue.WorkloadPriorityClass](t, docs["WorkloadPriorityClass"]) {
		values[pc.Name] = pc.Value
	}
	if values[PriorityHigh] <= values[PriorityLow] || values[PriorityLow] == 0 {
		t.Errorf("priority classes %v", values)
	}
}
