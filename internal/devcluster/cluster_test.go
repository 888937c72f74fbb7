package devcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestRealCluster brings a real cluster up from the binaries of `make tools`,
// checks its nodes, runs Up again, runs a Job to completion and deletes the
// cluster. It is skipped only when the binaries are missing.
func TestRealCluster(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(wd, t.TempDir(), os.Getenv)
	if _, err := LocateTools(o.ToolsBin); err != nil {
		t.Skipf("control-plane binaries not built (run `make tools` or set %s): %v", ToolsBinEnv, err)
	}
	o.Name = fmt.Sprintf("it-%d-%d", os.Getpid(), time.Now().UnixNano()%100000)
	o.WorkDir = t.TempDir()
	o.Port = freePort(t)
	o.Nodes = 2
	o.NodeCPU = resource.MustParse("8")
	o.NodeLabels = map[string]string{"topology.kubernetes.io/zone": "zone-a"}
	o.NodeGroups = []NodeGroup{{
		Name: "gpu", Count: 1, Labels: map[string]string{"accelerator": "a100"},
		Resources: corev1.ResourceList{GPUResource: resource.MustParse("4")},
	}}
	o.Log = t.Output()
	o.PodRuntime = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	t.Cleanup(func() { downAndCheck(t, o) })
	res, err := Up(ctx, o)
	if err != nil {
		t.Fatalf("Up() = %v", err)
	}
	t.Logf("Up: %s in %s, server %s", res.Action, res.Elapsed, res.Server)
	if res.Action != ActionCreated || res.Kubeconfig != filepath.Join(o.WorkDir, "clusters", o.Name, "kubeconfig.yaml") {
		t.Errorf("Up() = %+v, want a created cluster with its kubeconfig in the work dir", res)
	}
	cs := clientFor(t, res.Kubeconfig)
	checkNode(ctx, t, cs, "worker-1", "8", "", map[string]string{"topology.kubernetes.io/zone": "zone-a", NodeGroupLabel: "worker"})
	checkNode(ctx, t, cs, "gpu-0", "8", "4", map[string]string{"accelerator": "a100", "topology.kubernetes.io/zone": "zone-a"})

	// Again, with a change: one worker fewer, more cpu. The cluster is reused.
	o.Nodes = 1
	o.NodeCPU = resource.MustParse("16")
	res2, err := Up(ctx, o)
	if err != nil {
		t.Fatalf("second Up() = %v", err)
	}
	t.Logf("second Up: %s in %s", res2.Action, res2.Elapsed)
	if res2.Action != ActionReused || res2.Kubeconfig != res.Kubeconfig || res2.Server != res.Server {
		t.Errorf("second Up() = %+v, want the same cluster reused (first: %+v)", res2, res)
	}
	checkNode(ctx, t, cs, "worker-0", "16", "", nil)
	if _, err := cs.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); err == nil {
		t.Error("worker-1 still exists after the second Up asked for one worker")
	}

	runJob(ctx, t, cs, 2)
	checkPodLifecycles(ctx, t, cs)
}

// checkPodLifecycles: a pod whose restartPolicy is Always keeps running;
// one with the run-for annotation succeeds after it.
func checkPodLifecycles(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	mk := func(name string, annotations map[string]string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, Annotations: annotations},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/serve:1"}}}}
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", name, err)
		}
	}
	mk("serving", nil)
	mk("finite", map[string]string{RunForAnnotation: "1s"})
	phase := func(name string) corev1.PodPhase {
		p, err := cs.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return p.Status.Phase
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return phase("finite") == corev1.PodSucceeded, nil
	}); err != nil {
		t.Fatalf("the pod with %s=1s did not succeed: %s", RunForAnnotation, phase("finite"))
	}
	if got := phase("serving"); got != corev1.PodRunning {
		t.Errorf("a pod with restartPolicy Always is %s, want Running until deleted", got)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func clientFor(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func checkNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, cpu, gpus string, labels map[string]string) {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("node %s: %v", name, err)
	}
	if n.Annotations[KwokNodeAnnotation] != "fake" || n.Labels[corev1.LabelHostname] != name {
		t.Errorf("node %s: annotations %v, labels %v", name, n.Annotations, n.Labels)
	}
	for k, v := range labels {
		if n.Labels[k] != v {
			t.Errorf("node %s: label %s = %q, want %q", name, k, n.Labels[k], v)
		}
	}
	for _, list := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
		if got := list.Cpu().String(); got != cpu {
			t.Errorf("node %s: cpu %s, want %s", name, got, cpu)
		}
		if got := list.Memory().String(); got != "256Gi" {
			t.Errorf("node %s: memory %s, want 256Gi", name, got)
		}
		q, ok := list[GPUResource]
		if (gpus == "" && ok) || (gpus != "" && q.String() != gpus) {
			t.Errorf("node %s: nvidia.com/gpu %v (present %v), want %q", name, q.String(), ok, gpus)
		}
	}
	ready := false
	for _, c := range n.Status.Conditions {
		ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
	}
	if !ready {
		t.Errorf("node %s is not Ready: %+v", name, n.Status.Conditions)
	}
}

func runJob(ctx context.Context, t *testing.T, cs kubernetes.Interface, pods int32) {
	t.Helper()
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "sample", Namespace: metav1.NamespaceDefault},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods),
			Completions: ptr.To(pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "main", Image: "registry.example/sample:1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("1")}},
				}},
			}},
		},
	}
	start := time.Now()
	if _, err := cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the Job: %v", err)
	}
	var last *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 45*time.Second, true, func(ctx context.Context) (bool, error) {
		j, err := cs.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = j
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil || last == nil {
		t.Fatalf("Job did not complete: %v; last seen %+v", err, last)
	}
	if last.Status.Succeeded != pods {
		t.Errorf("Job succeeded pods = %d, want %d", last.Status.Succeeded, pods)
	}
	t.Logf("Job with %d pods completed in %s", pods, time.Since(start))
}

func downAndCheck(t *testing.T, o Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Down(ctx, o); err != nil {
		t.Errorf("Down() = %v", err)
	}
	if exists, err := ClusterExists(o); err != nil || exists {
		t.Errorf("after Down, ClusterExists() = %v, %v", exists, err)
	}
	// The API server has gone: its port is free again.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return CheckPortFree(o.Port) == nil, nil
	}); err != nil {
		t.Errorf("port %d still in use after Down", o.Port)
	}
	if err := Down(ctx, o); err != nil {
		t.Errorf("second Down() = %v, want nil", err)
	}
}
