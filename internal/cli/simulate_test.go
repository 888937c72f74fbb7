package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/sim"
)

const simQueues = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: gpu
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq
  namespace: team
spec:
  clusterQueue: team
`

const simTrace = `# two trainings that fill the GPUs, then an urgent one
{"at":"0s","namespace":"team","name":"a","queue":"lq","runtime":"10m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
{"at":"1s","namespace":"team","name":"b","queue":"lq","runtime":"10m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
{"at":"2m","namespace":"team","name":"urgent","queue":"lq","priority":100,"runtime":"5m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
`

// simulate --queues --trace runs a cluster's queues on a trace; the urgent
// workload preempts one of the long ones (their end is unknown), and
// --output json gives the figures as data.
func TestSimulateQueuesAndTrace(t *testing.T) {
	env, out, _ := testEnv(t)
	dir := t.TempDir()
	queues, trace := filepath.Join(dir, "q.yaml"), filepath.Join(dir, "t.trace")
	if err := os.WriteFile(queues, []byte(simQueues), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trace, []byte(simTrace), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := execute(t, env, "simulate", "--queues", queues, "--trace", trace, "--output", "json"); err != nil {
		t.Fatal(err)
	}
	var s struct {
		Workloads            int            `json:"workloads"`
		Finished             int            `json:"finished"`
		Evictions            int            `json:"evictions"`
		EvictionsPerWorkload float64        `json:"evictionsPerWorkload"`
		EvictionsByReason    map[string]int `json:"evictionsByReason"`
		UsagePercent         float64        `json:"usagePercent"`
		TimeToAdmission      []struct {
			Class string  `json:"class"`
			Mean  float64 `json:"mean"`
		} `json:"timeToAdmission"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatalf("output is not the JSON summary: %v\n%s", err, out)
	}
	if s.Workloads != 3 || s.Finished != 3 || s.Evictions != 1 || s.EvictionsByReason["InClusterQueue"] != 1 || s.UsagePercent <= 0 {
		t.Fatalf("summary %+v", s)
	}
}

func TestSimulateFlagErrors(t *testing.T) {
	env, _, _ := testEnv(t)
	for _, args := range [][]string{
		{"simulate"},
		{"simulate", "--scenario", "smoke", "--trace", "x"},
		{"simulate", "--scenario", "smoke", "--output", "yaml"},
		{"simulate", "--scenario", "smoke", "--latency", "admit=soon"},
		{"simulate", "--queues", "missing.yaml", "--trace", "missing.trace"},
	} {
		if err := execute(t, env, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// trace export writes a cluster's Workloads as a trace the simulator reads,
// and its queues as YAML.
func TestTraceExport(t *testing.T) {
	now := time.Now()
	admitted := func(name string, created, admittedAt time.Time, finishedAt *time.Time) *kueue.Workload {
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, CreationTimestamp: metav1.NewTime(created)},
			Spec: kueue.WorkloadSpec{QueueName: "lq", Priority: ptr.To[int32](5), PodSets: []kueue.PodSet{{Name: "main", Count: 2,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}}}}}}
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted",
			LastTransitionTime: metav1.NewTime(admittedAt)}}
		if finishedAt != nil {
			wl.Status.Conditions = append(wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
				Reason: "Succeeded", LastTransitionTime: metav1.NewTime(*finishedAt)})
		}
		return wl
	}
	end := now.Add(-time.Hour)
	objs := []client.Object{
		admitted("done", now.Add(-3*time.Hour), now.Add(-2*time.Hour), &end),
		&kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "waiting", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))},
			Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 1}}}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "team", ResourceVersion: "7"}},
	}
	c := fake.NewClientBuilder().WithScheme(kueueSchemeForTest(t)).WithObjects(objs...).Build()
	env, out, _ := testEnv(t)
	queues := filepath.Join(t.TempDir(), "q.yaml")
	root := NewRootCommand("kuota", env)
	root.RemoveCommand(findCommand(root, "trace"))
	root.AddCommand(newTraceCommand("kuota", env, func(string) (client.Reader, error) { return c, nil }))
	root.SetArgs([]string{"trace", "export", "--queues", queues})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"name":"done"`) || !strings.Contains(lines[0], `"runtime":"1h0m0s"`) ||
		!strings.Contains(lines[1], `"runtime":"1h0m0s"`) || !strings.Contains(lines[1], `"at":"2h59m0s"`) {
		t.Fatalf("trace:\n%s", out)
	}
	data, err := os.ReadFile(queues)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "kind: ClusterQueue") || strings.Contains(string(data), "resourceVersion") {
		t.Fatalf("queues:\n%s", data)
	}
}

func kueueSchemeForTest(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := kueue.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func findCommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// With a flavor naming a Topology, the exported queues carry the
// Topologies and the nodes (labels, allocatable, Ready), which the
// simulator reads back.
func TestTraceExportTopology(t *testing.T) {
	topo := kueue.TopologyReference("racks")
	objs := []client.Object{
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "tas"}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"pool": "tas"}, TopologyName: &topo}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}},
		&kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: "racks", ResourceVersion: "3"}, Spec: kueue.TopologySpec{
			Levels: []kueue.TopologyLevel{{NodeLabel: "rack"}}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "tas", "rack": "a"},
			Annotations: map[string]string{"noise": "x"}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("8")},
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"},
					{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}}}},
	}
	s := kueueSchemeForTest(t)
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	env, _, _ := testEnv(t)
	queues := filepath.Join(t.TempDir(), "q.yaml")
	root := NewRootCommand("kuota", env)
	root.RemoveCommand(findCommand(root, "trace"))
	root.AddCommand(newTraceCommand("kuota", env, func(string) (client.Reader, error) { return c, nil }))
	root.SetArgs([]string{"trace", "export", "--queues", queues})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(queues)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "noise") || strings.Contains(string(data), "MemoryPressure") {
		t.Fatalf("node exported with more than placement reads:\n%s", data)
	}
	setup, err := sim.ReadSetup(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("reading the export back: %v\n%s", err, data)
	}
	if len(setup.Topologies) != 1 || len(setup.Nodes) != 1 || setup.Nodes[0].Labels["rack"] != "a" {
		t.Fatalf("topologies %d, nodes %+v", len(setup.Topologies), setup.Nodes)
	}
}

const fairQueues = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: gpu
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: shared
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  admissionScope:
    admissionMode: UsageBasedAdmissionFairSharing
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-a
  namespace: team
spec:
  clusterQueue: shared
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-b
  namespace: team
spec:
  clusterQueue: shared
`

// lq-a queues four 1-minute jobs that each take the whole queue; lq-b
// queues one a little later.
const fairTrace = `{"at":"0s","namespace":"team","name":"a1","queue":"lq-a","class":"a","runtime":"1m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
{"at":"1s","namespace":"team","name":"a2","queue":"lq-a","class":"a","runtime":"1m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
{"at":"2s","namespace":"team","name":"a3","queue":"lq-a","class":"a","runtime":"1m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
{"at":"3s","namespace":"team","name":"a4","queue":"lq-a","class":"a","runtime":"1m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
{"at":"10s","namespace":"team","name":"b1","queue":"lq-b","class":"b","runtime":"1m","podSets":[{"name":"main","count":4,"requests":{"nvidia.com/gpu":"1"}}]}
`

// simulate --config applies the Configuration's admission fair sharing:
// lq-b's job goes right after the running one, ahead of lq-a's older
// ones; without the Configuration it waits for all of them.
func TestSimulateWithAdmissionFairSharing(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"q.yaml": fairQueues, "t.trace": fairTrace, "config.yaml": `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: 10m
  usageSamplingInterval: 10s
`}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	waitOfB := func(extra ...string) float64 {
		t.Helper()
		env, out, _ := testEnv(t)
		args := append([]string{"simulate", "--queues", filepath.Join(dir, "q.yaml"), "--trace", filepath.Join(dir, "t.trace"), "--output", "json"}, extra...)
		if err := execute(t, env, args...); err != nil {
			t.Fatal(err)
		}
		var s struct {
			TimeToAdmission []struct {
				Class string  `json:"class"`
				Mean  float64 `json:"mean"`
			} `json:"timeToAdmission"`
		}
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("output is not the JSON summary: %v\n%s", err, out)
		}
		for _, c := range s.TimeToAdmission {
			if c.Class == "b" {
				return c.Mean
			}
		}
		t.Fatalf("no class b in %s", out)
		return 0
	}
	if got := waitOfB(); got < 180 {
		t.Errorf("without admission fair sharing lq-b waited %.0f s, want behind all of lq-a's (about 230 s)", got)
	}
	if got := waitOfB("--config", filepath.Join(dir, "config.yaml")); got > 60 {
		t.Errorf("with admission fair sharing lq-b waited %.0f s, want it next after the running job (about 50 s)", got)
	}
	env, _, _ := testEnv(t)
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nadmissionFairSharing:\n  usageHalfLifeTime: -1h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := execute(t, env, "simulate", "--queues", filepath.Join(dir, "q.yaml"), "--trace", filepath.Join(dir, "t.trace"), "--config", bad)
	if err == nil || !strings.Contains(err.Error(), "admissionFairSharing.usageHalfLifeTime") {
		t.Errorf("a bad Configuration: error %v, want one naming the field", err)
	}
}
