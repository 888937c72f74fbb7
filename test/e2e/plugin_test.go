package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cli"
)

// kubectlKuota runs `kubectl kuota args...` against the e2e cluster, in the
// test process, and returns what it printed.
func kubectlKuota(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := cli.NewRootCommand("kubectl kuota", cli.Env{Out: &out, Err: &errOut, Getenv: func(string) string { return "" },
		In: strings.NewReader("")})
	root.SetArgs(append(args, "--kubeconfig", suite.kubeconfig, "--cache-dir", t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String() + errOut.String(), err
}

// On the local cluster, through kube-apiserver's aggregation layer: `kubectl
// kuota list workload` shows the pending Jobs' positions from the
// pending-workloads API, and `why` names what holds the quota and how many
// wait ahead.
func TestPluginShowsPositionsAndWhy(t *testing.T) {
	ns, cq := queues(t, "2")
	hold := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "holder"}, Spec: kueue.WorkloadSpec{QueueName: "lq",
		PodSets: []kueue.PodSet{{Name: "main", Count: 2, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}}}}}
	create(t, hold)
	eventually(t, 30*time.Second, "the holder admitted", func() error {
		if reserving(t, cq) != 1 {
			return fmt.Errorf("not admitted yet")
		}
		return nil
	})
	first, second := job(ns, "first", "lq", 1, 1, "1"), job(ns, "second", "lq", 1, 1, "1")
	create(t, first)
	time.Sleep(1100 * time.Millisecond) // creation times are stamped in seconds
	create(t, second)

	var out string
	eventually(t, 60*time.Second, "list workload shows both positions", func() error {
		var err error
		out, err = kubectlKuota(t, "list", "workload", "-n", ns)
		if err != nil {
			return err
		}
		for _, want := range []string{"POSITION IN QUEUE"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("no %q in\n%s", want, out)
			}
		}
		return positionsAre(out, map[string]string{"first": "0", "second": "1"})
	})
	t.Logf("kubectl kuota list workload -n %s:\n%s", ns, out)

	var wl string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.Contains(f[0], "second") {
			wl = f[0]
		}
	}
	why, err := kubectlKuota(t, "why", wl, "-n", ns, "--no-estimate")
	t.Logf("kubectl kuota why %s -n %s:\n%s", wl, ns, why)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"InsufficientQuota", "1 workload is ahead of it", ns + "/holder (2, priority 0)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q", want)
		}
	}
}

// positionsAre checks the POSITION IN QUEUE column of the rows whose name
// contains each key.
func positionsAre(table string, want map[string]string) error {
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) < 2 {
		return fmt.Errorf("no rows in\n%s", table)
	}
	col := strings.Index(lines[0], "POSITION IN QUEUE")
	for key, pos := range want {
		found := false
		for _, l := range lines[1:] {
			f := strings.Fields(l)
			if len(f) == 0 || !strings.Contains(f[0], key) {
				continue
			}
			found = true
			got := ""
			if col >= 0 && col < len(l) {
				if g := strings.Fields(l[col:]); len(g) > 0 {
					got = g[0]
				}
			}
			if got != pos {
				return fmt.Errorf("%s is at position %q, want %s, in\n%s", key, got, pos, table)
			}
		}
		if !found {
			return fmt.Errorf("no row for %s in\n%s", key, table)
		}
	}
	return nil
}
