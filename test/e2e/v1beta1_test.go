package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// v1beta1Setup is a queue setup written for kueue.x-k8s.io/v1beta1, the
// way Kueue's documentation wrote it before v1beta2: the cohort in
// spec.cohort, the priority class of a Workload by name and source.
const v1beta1Setup = `apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: NS-flavor
spec:
  nodeLabels:
    pool: on-demand
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: NS-high
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: NS-cq
spec:
  cohort: NS-cohort
  namespaceSelector: {}
  flavorFungibility:
    whenCanBorrow: Borrow
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: NS-flavor
      resources:
      - name: cpu
        nominalQuota: 4
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: lq
  namespace: NS
spec:
  clusterQueue: NS-cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: direct
  namespace: NS
spec:
  queueName: lq
  priorityClassName: NS-high
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 1000
  podSets:
  - name: main
    count: 2
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          resources:
            requests:
              cpu: "1"
`

// kubectl runs kubectl against the e2e cluster, with manifest (if any)
// given as a file, and fails the test if it fails.
func kubectl(t *testing.T, manifest string, args ...string) string {
	t.Helper()
	if manifest != "" {
		args = append(args, "-f", writeTemp(t, manifest))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := kubectlTries(ctx, suite.kubectl, suite.kubeconfig, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	// The API server warns on every v1beta1 request (it is deprecated).
	var lines []string
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if !strings.HasPrefix(l, "Warning: ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "")
}

// A user's v1beta1 manifests, applied with kubectl as they are: the queues
// work (a Workload written in v1beta1 is admitted in the ClusterQueue of
// its v1beta1 LocalQueue), reading back in v1beta1 shows them as written,
// and reading in v1beta2 shows them converted.
func TestV1beta1ManifestsWork(t *testing.T) {
	ns := namespace(t)
	manifest := strings.ReplaceAll(v1beta1Setup, "NS", ns)
	kubectl(t, manifest, "apply", "--server-side")
	file := writeTemp(t, manifest)
	t.Cleanup(func() {
		_, _ = kubectlTries(context.Background(), suite.kubectl, suite.kubeconfig, "delete", "--wait=false", "-f", file)
	})

	eventually(t, time.Minute, "the v1beta1 Workload admitted in its ClusterQueue", func() error {
		out := kubectl(t, "", "get", "workloads.v1beta1.kueue.x-k8s.io", "-n", ns, "direct",
			"-o", "jsonpath={.status.admission.clusterQueue} {.spec.priorityClassSource} {.spec.priorityClassName}")
		if want := ns + "-cq kueue.x-k8s.io/workloadpriorityclass " + ns + "-high"; out != want {
			return fmt.Errorf("v1beta1 Workload reads %q, want %q; in v1beta2:\n%s", out, want,
				kubectl(t, "", "get", "workloads.v1beta2.kueue.x-k8s.io", "-n", ns, "direct", "-o", "yaml"))
		}
		return nil
	})
	if out := kubectl(t, "", "get", "workloads.v1beta2.kueue.x-k8s.io", "-n", ns, "direct", "-o", "jsonpath={.spec.priorityClassRef.kind}/{.spec.priorityClassRef.name}"); out != "WorkloadPriorityClass/"+ns+"-high" {
		t.Errorf("v1beta2 priorityClassRef = %q", out)
	}
	if out := kubectl(t, "", "get", "clusterqueues.v1beta2.kueue.x-k8s.io", ns+"-cq", "-o", "jsonpath={.spec.cohortName} {.spec.flavorFungibility.whenCanBorrow}"); out != ns+"-cohort MayStopSearch" {
		t.Errorf("v1beta2 ClusterQueue reads %q, want the cohort as cohortName and Borrow as MayStopSearch", out)
	}
	if out := kubectl(t, "", "get", "clusterqueues.v1beta1.kueue.x-k8s.io", ns+"-cq", "-o", "jsonpath={.spec.cohort}"); out != ns+"-cohort" {
		t.Errorf("v1beta1 ClusterQueue spec.cohort = %q", out)
	}
	// Applying the same v1beta1 manifests again changes nothing and fails
	// nothing (server-side apply through the conversion).
	kubectl(t, manifest, "apply", "--server-side")
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
