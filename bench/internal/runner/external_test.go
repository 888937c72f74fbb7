package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/bench/internal/summary"
)

// clientEnv makes the test binary act as an external client (see
// TestMain): "queue" queues three one-CPU workloads on a one-CPU
// ClusterQueue, plays each as admitted then finished, and exits 0;
// "fail" exits 3 at once.
const clientEnv = "KUOTA_BENCH_TEST_CLIENT"

func TestMain(m *testing.M) {
	switch os.Getenv(clientEnv) {
	case "":
		os.Exit(m.Run())
	case "fail":
		fmt.Fprintln(os.Stderr, "client: failing on purpose")
		os.Exit(3)
	default:
		if err := playClient(); err != nil {
			fmt.Fprintln(os.Stderr, "client:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// TestExternalClient runs the test binary as the client: it must be
// handed a kubeconfig that reaches the API server with the manager
// behind it (its workloads are admitted one at a time and finish), and
// the harness must count its workloads and the manager's writes. A
// client that fails makes the run fail with its exit status.
func TestExternalClient(t *testing.T) {
	if _, err := ToolsBin(); errors.Is(err, ErrNoTools) {
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(clientEnv, "queue")
	out := t.TempDir()
	e, err := RunExternal(ctx, Options{Out: out, Timeout: 2 * time.Minute, Log: logWriter{t}}, []string{self, "-test.run", "none"})
	if e != nil {
		var b strings.Builder
		if rerr := summary.RenderExternal(&b, e); rerr == nil {
			t.Logf("summary:\n%s", b.String())
		}
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(out, ClientLogFile))
		t.Fatalf("run: %v; client log:\n%s", err, log)
	}
	if e.Workloads != 3 || e.Evictions != 0 {
		t.Errorf("workloads %d, evictions %d; want 3 created and none evicted", e.Workloads, e.Evictions)
	}
	if e.Writes == nil || e.Writes.WorkloadWrites < 3 || e.Writes.PerWorkload < 1 {
		t.Errorf("manager writes = %+v, want at least one admission write per workload", e.Writes)
	}
	if e.Manager.CPUSeconds <= 0 || e.APIServer == nil {
		t.Errorf("manager %+v, API server %+v: want both measured", e.Manager, e.APIServer)
	}
	data, err := os.ReadFile(filepath.Join(out, ExternalSummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var saved summary.External
	if err := yaml.Unmarshal(data, &saved); err != nil || saved.Workloads != 3 {
		t.Errorf("saved summary: %v, %d workloads; want 3", err, saved.Workloads)
	}

	t.Setenv(clientEnv, "fail")
	e, err = RunExternal(ctx, Options{Out: t.TempDir(), Manager: filepath.Join(out, "kuota-manager"), Timeout: time.Minute, Log: logWriter{t}},
		[]string{self, "-test.run", "none"})
	if err == nil || e == nil || !strings.Contains(e.ExitError, "exit status 3") {
		t.Errorf("failing client: err %v, summary %+v; want the run to fail with exit status 3", err, e)
	}
}

// playClient is the "queue" client.
func playClient() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	scheme, err := newScheme()
	if err != nil {
		return err
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	cpu := corev1.ResourceCPU
	one := resource.MustParse("1")
	objs := []client.Object{
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{cpu},
				Flavors: []kueue.FlavorQuotas{{Name: "default", Resources: []kueue.ResourceQuota{{Name: cpu, NominalQuota: one}}}}}}}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: "lq", Namespace: "team"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}},
	}
	for i := range 3 {
		objs = append(objs, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("w%d", i), Namespace: "team"},
			Spec: kueue.WorkloadSpec{QueueName: "lq", PodSets: []kueue.PodSet{{Name: "main", Count: 1,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{cpu: one}}}}}}}}}})
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %s: %w", o.GetName(), err)
		}
	}
	for finished := 0; finished < 3; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%d of 3 workloads finished: %w", finished, err)
		}
		var list kueue.WorkloadList
		if err := c.List(ctx, &list, client.InNamespace("team")); err != nil {
			return err
		}
		finished = 0
		for i := range list.Items {
			wl := &list.Items[i]
			switch {
			case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
				finished++
			case meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted):
				meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished,
					Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "played by the test client"})
				if err := c.Status().Update(ctx, wl); err != nil && !apierrors.IsConflict(err) {
					return fmt.Errorf("finishing %s: %w", wl.Name, err)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}
