package crash

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/audit"
)

const (
	crashWorkloads = 500
	crashKills     = 20
	crashQueues    = 4
)

const managerConfig = `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection:
  leaderElect: true
  resourceNamespace: default
  leaseDuration: 2s
  renewDeadline: 1500ms
  retryPeriod: 200ms
metrics:
  bindAddress: "0"
health:
  healthProbeBindAddress: "0"
`

// TestSurvivesSIGKILL kills the manager 20 times while 500 workloads are
// created, admitted and finished (by the test, playing the jobs), and checks
// that quota is never overcommitted, nothing is admitted twice, and every
// workload is eventually admitted and finished with a clean audit.
//
// Leader election is on, with short timings, as in production: a killed
// manager's last writes may still reach the API server after it died, and
// the lease keeps its successor from deciding anything before they have.
func TestSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	kubeconfig, config := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(kubeconfig, env.KubeConfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(managerConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := managerBinary(t)
	// The log outlives the test's temporary folder, for failures.
	logPath := filepath.Join(os.TempDir(), "kuota-crash-manager.log")
	_ = os.Remove(logPath)
	ns := setupQueues(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	r := &runner{ns: ns, admittedAt: map[string]time.Time{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); r.create(ctx, t) }()
	go func() { defer wg.Done(); r.finish(ctx, t) }()

	rng := rand.New(rand.NewPCG(42, 7))
	p := startProcess(t, bin, kubeconfig, config, logPath)
	for i := range crashKills {
		time.Sleep(time.Duration(2500+rng.IntN(2000)) * time.Millisecond)
		if done, err := p.exited(); done {
			t.Fatalf("kuota-manager exited on its own before kill %d: %v; log: %s", i, err, logPath)
		}
		p.kill(t)
		checkLimits(t, fmt.Sprintf("after kill %d", i+1))
		p = startProcess(t, bin, kubeconfig, config, logPath)
	}
	deadline := time.Now().Add(90 * time.Second)
	for r.finished.Load() < crashWorkloads && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	if got := r.finished.Load(); got < crashWorkloads {
		p.kill(t)
		t.Fatalf("only %d of %d workloads finished within 90s after the last kill; log: %s\nunfinished:\n%s", got, crashWorkloads, logPath, describeUnfinished())
	}
	// Let the status reporter catch up, then audit everything.
	time.Sleep(2 * time.Second)
	rep, err := audit.Run(context.Background(), env.Client)
	p.kill(t)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("audit after %d kills:\n%s\nlog: %s", crashKills, rep, logPath)
	}
	t.Logf("%d workloads admitted and finished across %d SIGKILLs; audit: %s", crashWorkloads, crashKills, rep.Summary())
}

// checkLimits audits the invariants that hold at any instant (status may lag).
func checkLimits(t *testing.T, when string) {
	t.Helper()
	rep, err := audit.Run(context.Background(), env.Client)
	if err != nil {
		t.Fatalf("audit %s: %v", when, err)
	}
	for _, v := range rep.Violations {
		switch v.Kind {
		case audit.KindStatusMismatch:
			continue
		default:
			t.Fatalf("audit %s: %s\n%s", when, v, describeReservations())
		}
	}
}

// setupQueues creates a flavor, a cohort of queues with preemption, and a
// LocalQueue per queue in a fresh namespace.
func setupQueues(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	objs := []client.Object{&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "crash-flavor"}}}
	for i := range crashQueues {
		name := fmt.Sprintf("crash-cq-%d", i)
		objs = append(objs, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: kueue.ClusterQueueSpec{
			CohortName:        "crash",
			NamespaceSelector: &metav1.LabelSelector{},
			Preemption: &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority,
				ReclaimWithinCohort: kueue.PreemptionPolicyAny},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: "crash-flavor", Resources: []kueue.ResourceQuota{
					{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("6")}}}}}},
		}}, &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(name)}})
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatalf("creating %s: %v", o.GetName(), err)
		}
	}
	return ns
}

// runner plays the users and the jobs: it creates workloads and finishes
// them some time after they are admitted.
type runner struct {
	ns         string
	mu         sync.Mutex
	admittedAt map[string]time.Time
	finished   atomic.Int64
}

func (r *runner) create(ctx context.Context, t *testing.T) {
	for i := range crashWorkloads {
		if ctx.Err() != nil {
			return
		}
		cpu := []string{"1", "2", "3"}[i%3]
		wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: fmt.Sprintf("w-%03d", i)}, Spec: kueue.WorkloadSpec{
			QueueName: kueue.LocalQueueName(fmt.Sprintf("crash-cq-%d", i%crashQueues)),
			Priority:  ptr.To(int32((i % 3) * 50)),
			PodSets: []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}},
		}}
		if err := env.Client.Create(ctx, wl); err != nil && ctx.Err() == nil {
			t.Errorf("creating %s: %v", wl.Name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runtimeOf gives each workload a runtime of 100-400ms.
func runtimeOf(name string) time.Duration {
	h := fnv.New32a()
	h.Write([]byte(name))
	return time.Duration(100+h.Sum32()%300) * time.Millisecond
}

func (r *runner) finish(ctx context.Context, t *testing.T) {
	for ctx.Err() == nil {
		var list kueue.WorkloadList
		if err := env.Client.List(ctx, &list, client.InNamespace(r.ns)); err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		done := int64(0)
		for i := range list.Items {
			wl := &list.Items[i]
			if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
				done++
				continue
			}
			if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadAdmitted) ||
				meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted) {
				continue
			}
			r.mu.Lock()
			at, seen := r.admittedAt[wl.Name+"/"+string(wl.Status.Admission.ClusterQueue)]
			if !seen {
				r.admittedAt[wl.Name+"/"+string(wl.Status.Admission.ClusterQueue)] = time.Now()
			}
			r.mu.Unlock()
			if seen && time.Since(at) >= runtimeOf(wl.Name) {
				meta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished,
					Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedSucceeded, Message: "done"})
				if err := env.Client.Status().Update(ctx, wl); err == nil {
					done++
				}
			}
		}
		r.finished.Store(done)
		time.Sleep(100 * time.Millisecond)
	}
}

// describeReservations lists the workloads holding quota, for failures.
func describeReservations() string {
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list); err != nil {
		return err.Error()
	}
	out := ""
	for _, wl := range list.Items {
		if wl.Status.Admission == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		out += fmt.Sprintf("%s cq=%s usage=%v evicted=%v conds=", wl.Name, wl.Status.Admission.ClusterQueue,
			wl.Status.Admission.PodSetAssignments[0].ResourceUsage.Cpu().String(), meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted))
		for _, c := range wl.Status.Conditions {
			out += fmt.Sprintf("%s=%s(%s,%s) ", c.Type, c.Status, c.Reason, c.LastTransitionTime.Format("15:04:05"))
		}
		out += "\n"
	}
	return out
}

// describeUnfinished lists the workloads not finished, for failures.
func describeUnfinished() string {
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list); err != nil {
		return err.Error()
	}
	out := ""
	for _, wl := range list.Items {
		if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		out += fmt.Sprintf("%s queue=%s admission=%v conds=", wl.Name, wl.Spec.QueueName, wl.Status.Admission != nil)
		for _, c := range wl.Status.Conditions {
			out += fmt.Sprintf("%s=%s(%s: %s) ", c.Type, c.Status, c.Reason, c.Message)
		}
		out += "\n"
	}
	return out
}
