package crash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

const crashQueues = 4

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
featureGates:
  VisibilityOnDemand: false
`

// TestSurvivesSIGKILL runs several kuota-manager processes under one lease
// while workloads are created, admitted, preempted and finished (by the
// test, playing the users and the jobs), and meanwhile SIGKILLs replicas
// (the leader more often than not) at random moments, some right after an
// admission or an eviction was seen, restarts kube-apiserver and etcd,
// pauses the leader past its lease, and drops every connection of the
// replicas to the API server (their watches end; they relist). After
// every fault the invariants that hold at any instant must
// hold: no quota overcommitted, no reservation inconsistent. Mid-run, with
// the flow paused, and at the end the full audit must come clean: the
// ClusterQueue status equals the sum over the workloads holding quota. At
// the end every workload must exist and have finished, and no workload may
// ever have taken a reservation while holding one.
//
// The short profile runs by default; KUOTA_TORTURE=1 runs the full one
// (`make torture`); KUOTA_CRASH_* adjust it (profile_test.go). Each
// replica's log is kept in $TMPDIR/kuota-crash-manager-<replica>.log and
// the control plane's in $TMPDIR/kuota-crash-controlplane.log.
//
// Leader election has short timings, as a killed leader's last writes
// may still reach the API server after it died: the lease keeps its
// successor from deciding anything before they have.
func TestSurvivesSIGKILL(t *testing.T) {
	prof, err := loadProfile()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(prof)
	h := newHarness(t, prof)
	defer h.stop()
	rng := rand.New(rand.NewPCG(prof.seed, 7))
	sched := prof.schedule(rng)
	for i, f := range sched {
		h.run.allowed.Store(int64(prof.workloads * (i + 1) / len(sched)))
		time.Sleep(prof.gapMin + time.Duration(rng.Int64N(int64(prof.gapMax-prof.gapMin)+1)))
		switch f {
		case faultKill:
			h.kill(t, rng)
		case faultAPIServer:
			h.restart(t, "kube-apiserver", env.RestartAPIServer, &h.fig.apiRestarts)
		case faultEtcd:
			h.restart(t, "etcd", env.RestartEtcd, &h.fig.etcdRestarts)
		case faultPause:
			h.pause(t, rng)
		case faultDrop:
			h.drop(rng)
		}
		h.strictAudit(t, fmt.Sprintf("after fault %d of %d", i+1, len(sched)))
		if prof.quiescentAfter(i+1, len(sched)) {
			h.quiescentAudit(t, fmt.Sprintf("mid-run after fault %d", i+1))
		}
		h.checkReplicas(t)
		if (i+1)%25 == 0 {
			t.Logf("%s: %d of %d faults done, %d workloads created, %d finished", time.Since(h.fig.start).Round(time.Second),
				i+1, len(sched), h.run.created.Load(), h.run.finished.Load())
		}
	}
	h.run.allowed.Store(int64(prof.workloads))
	h.fig.faultPhase = time.Since(h.fig.start)
	h.fig.leftAfterFaults = h.prof.workloads - int(h.run.finished.Load())
	h.drain(t)
	h.fig.drain = time.Since(h.fig.start) - h.fig.faultPhase
	h.finalChecks(t)
	h.fig.total = time.Since(h.fig.start)
	t.Log(h.figures())
}

// harness holds what a run needs.
type harness struct {
	prof    profile
	ns      string
	cancel  context.CancelFunc
	obs     *observer
	run     *runner
	rs      *replicaSet
	rec     *recovery
	outages *outages
	// drops: when the replicas' connections were dropped; apart from
	// outages, as an API server's refusals are explained by its restarts
	// alone.
	drops *outages
	// proxy stands between the replicas and kube-apiserver (drops_test.go).
	proxy *testutil.TCPProxy
	fig   figures
}

func newHarness(t *testing.T, prof profile) *harness {
	t.Helper()
	dir := t.TempDir()
	kubeconfig, config := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "config.yaml")
	installManagerIdentity(t)
	proxy := apiProxy(t)
	if err := os.WriteFile(kubeconfig, managerKubeconfig(t, proxy.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(managerConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := managerBinary(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{prof: prof, ns: setupQueues(t), cancel: cancel, rec: &recovery{}, outages: &outages{}, drops: &outages{}, proxy: proxy}
	h.fig.start = time.Now()
	obs, err := newObserver(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	obs.onAdmission = h.rec.admission
	h.obs = obs
	h.run = &runner{ns: h.ns, total: prof.workloads, reader: obs.cache, admittedAt: map[string]time.Time{},
		pace: max(prof.plannedDuration()/time.Duration(prof.workloads), time.Millisecond)}
	h.rs = &replicaSet{bin: bin, kubeconfig: kubeconfig, config: config,
		onLeader: func(_ int, at time.Time) { h.rec.leaderTook(at) }, outage: h.unreachable}
	h.rs.start(ctx, prof.replicas, prof.seed)
	go h.run.create(ctx)
	go h.run.finish(ctx)
	return h
}

// stop ends the flow and the replicas.
func (h *harness) stop() {
	h.cancel()
	h.rs.stop()
}

// kill SIGKILLs one replica: the leader half the time, otherwise a random
// one (the leader again, half the time, with two replicas). Half of the
// kills wait for an admission or an eviction to be seen first, so that
// they land in the middle of a burst of such writes.
func (h *harness) kill(t *testing.T, rng *rand.Rand) {
	t.Helper()
	switch rng.IntN(4) {
	case 2:
		h.obs.waitFor(sigAdmission, 2*time.Second)
	case 3:
		h.obs.waitFor(sigEviction, 2*time.Second)
	}
	wantLeader := rng.IntN(2) == 0
	var p *process
	for deadline := time.Now().Add(30 * time.Second); p == nil; {
		if p, _ = h.rs.pick(rng, wantLeader); p == nil {
			if time.Now().After(deadline) {
				t.Fatalf("no replica running for 30s\n%s", h.problems())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	now := time.Now()
	wasLeader := p.leader.Load()
	if err := p.kill(); err != nil {
		t.Fatal(err)
	}
	h.fig.kills++
	if wasLeader {
		h.fig.leaderKills++
		h.rec.leaderKilled(now, h.obs.waitingWorkloads() > 0, h.unreachable(now))
	}
	phases := h.obs.recent(now, time.Second)
	if len(phases) == 0 {
		h.fig.idleKills++
	}
	for _, s := range phases {
		h.fig.killPhases[s]++
	}
}

// pauseFor is how long a paused leader stays stopped: three lease
// durations of managerConfig, so that another replica takes the lease
// while it cannot see it go. Let go on, it must stop writing (the
// resourceVersion preconditions refuse what it had in flight) and exit
// once it finds the lease lost.
const pauseFor = 6 * time.Second

// pause stops the leader (SIGSTOP) for pauseFor, then lets it go on
// (SIGCONT).
func (h *harness) pause(t *testing.T, rng *rand.Rand) {
	t.Helper()
	var p *process
	for deadline := time.Now().Add(30 * time.Second); p == nil || !p.leader.Load(); {
		if p, _ = h.rs.pick(rng, true); (p == nil || !p.leader.Load()) && time.Now().After(deadline) {
			t.Logf("no leader to pause within 30s; skipping the pause")
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return // it has just exited
	}
	h.fig.pauses++
	time.Sleep(pauseFor)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
}

// restart restarts a control-plane component and counts it.
func (h *harness) restart(t *testing.T, what string, restart func() error, count *int) {
	t.Helper()
	h.rec.reset()
	h.outages.begin()
	start := time.Now()
	err := restart()
	h.outages.end()
	if err != nil {
		t.Fatalf("restarting %s: %v", what, err)
	}
	*count++
	h.fig.maxRestart = max(h.fig.maxRestart, time.Since(start))
}

// checkReplicas fails the test when a replica exited for no good reason.
func (h *harness) checkReplicas(t *testing.T) {
	t.Helper()
	if _, _, problems := h.rs.report(); len(problems) > 0 {
		t.Fatalf("kuota-manager replicas:\n%s", h.problems())
	}
}

// setupQueues creates a flavor, a cohort of queues with preemption within
// each queue and reclaim within the cohort, and a LocalQueue per queue in
// a fresh namespace.
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
