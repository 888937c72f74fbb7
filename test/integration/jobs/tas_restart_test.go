package jobs

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/tas"
)

const blockLabel = "example.com/topology-block"

// tolerated is how long the pods of job "tolerating" tolerate the node
// controller's not-ready taint: the timeout after which a node that stays
// not ready fails for them.
const tolerated = 3 * time.Second

// Nodes go not ready and ready again, one is deleted and recreated with
// the same name and labels, one loses its topology labels and gets them
// back, some of it while the manager is stopped and some while a new one
// starts. The jobs whose nodes end up ready, and those whose pods tolerate
// a node not ready for the default 300 s, keep their placements, are never
// evicted and never name an unhealthy node. Two jobs' nodes fail while no
// manager runs: one stays not ready past its pods' toleration, on the
// other the job's pod failed and the node is not ready. The new manager
// gives each of them other nodes once (or, without TASFailedNodeReplacement,
// evicts it once, naming the node in status.unhealthyNodes, and places it
// again). No status write fails, and the ClusterQueue's usage is what its
// workloads hold.
func TestTASNodeFlappingDuringARestart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace bool
	}{{"replacing nodes", true}, {"evicting", false}} {
		t.Run(tc.name, func(t *testing.T) { flapDuringRestart(t, tc.replace) })
	}
}

func flapDuringRestart(t *testing.T, replace bool) {
	logLines := managerLog.record(t)
	gate := func(c *configapi.Configuration) {
		c.FeatureGates = map[string]bool{"TASFailedNodeReplacement": replace}
	}
	startManager(t, gate)
	s := placeFlapJobs(t)
	seen := watchWorkloads(t, s.ns, slices.Collect(maps.Values(s.failingWl)))
	s.restartWhileFlapping(gate)
	for job, node := range s.failing {
		s.waitMovedOff(job, node)
	}
	// Some more cycles and reconciles for anything wrong to show.
	afterCycles(t, nil)
	time.Sleep(2 * time.Second)

	for job, adm := range s.admissions {
		wl := workloadOf(t, getJob(t, s.ns, job))
		if !equality.Semantic.DeepEqual(wl.Status.Admission, adm) {
			t.Errorf("%s: admission changed from %+v to %+v", job, adm, wl.Status.Admission)
		}
		if len(wl.Status.UnhealthyNodes) > 0 {
			t.Errorf("%s: unhealthyNodes %v at the end", job, wl.Status.UnhealthyNodes)
		}
	}
	report := seen()
	for _, v := range report.violations {
		t.Error(v)
	}
	s.checkFailed(report, replace)
	lines := logLines()
	if len(containing(lines, "scheduler started")) != 2 {
		t.Errorf("the log of the two managers was not captured: %d lines", len(lines))
	}
	if lines := containing(lines, "duplicate entries"); len(lines) > 0 {
		t.Errorf("status writes failed:\n%s", strings.Join(lines, "\n"))
	}
	eventually(t, "ClusterQueue usage matches its workloads", func() error { return auditQueue(s.ns, s.cq) })
}

// checkFailed checks what happened to the jobs whose node failed: other
// nodes given once, or (replace off) one eviction naming the node and a
// new placement.
func (s *flapScenario) checkFailed(report workloadHistory, replace bool) {
	t := s.t
	for job, wl := range s.failingWl {
		var nodes [][]string
		for _, a := range report.assignments[wl] {
			nodes = append(nodes, tas.Nodes(a))
		}
		t.Logf("%s: %d evictions, placed on %v, unhealthy nodes %v", job, report.evictions[wl], nodes, report.unhealthy[wl])
		wantEvictions, wantUnhealthy := 1, []string{s.failing[job]}
		if replace {
			wantEvictions, wantUnhealthy = 0, nil
		}
		if n := report.evictions[wl]; n != wantEvictions {
			t.Errorf("%s was evicted %d times, want %d", job, n, wantEvictions)
		}
		if got := report.unhealthy[wl]; !slices.Equal(got, wantUnhealthy) {
			t.Errorf("%s named the unhealthy nodes %v, want %v", job, got, wantUnhealthy)
		}
		if n := len(nodes); n != 2 {
			t.Errorf("%s was placed %d times (%v), want its first placement and one more", job, n, nodes)
		}
	}
}

// flapScenario is the cluster of TestTASNodeFlappingDuringARestart.
type flapScenario struct {
	t      *testing.T
	ns, cq string
	labels map[string]map[string]string
	// admissions are those of the jobs that must keep them, by job.
	admissions map[string]*kueue.Admission
	// failing maps the jobs whose node fails to that node; failingWl to
	// their Workloads' names.
	failing, failingWl map[string]string
	// stoppedPod is the pod of job "stopped", running on its node.
	stoppedPod *corev1.Pod
	// The nodes that flap (not ready, ready), are recreated, and are
	// relabelled out of the topology and back.
	flapping, recreated, relabelled string
}

// placeFlapJobs builds the topology, places the jobs and picks the nodes
// to flap: nodes of the jobs that keep their placements, outside the
// racks of the failing nodes (their pods need room in their rack).
func placeFlapJobs(t *testing.T) *flapScenario {
	s := &flapScenario{t: t, admissions: map[string]*kueue.Admission{}, failing: map[string]string{}, failingWl: map[string]string{}}
	s.ns, s.cq, s.labels = flapTopology(t)
	topologyJob := func(name string, pods int32, cpu, level string, tolerations ...corev1.Toleration) {
		j := newJob(s.ns, name, "lq", pods, cpu)
		j.Spec.Template.Annotations = map[string]string{"kueue.x-k8s.io/podset-required-topology": level}
		j.Spec.Template.Spec.Tolerations = tolerations
		create(t, j)
	}
	// The rack jobs take 2 CPUs on both nodes of three racks; the wide
	// job 8 CPUs in a block; the failing jobs 1 CPU each, where their
	// rack keeps room for them.
	kept := []string{"r1", "r2", "r3", "wide"}
	for _, name := range kept[:3] {
		topologyJob(name, 2, "2", rackLabel)
	}
	topologyJob("wide", 4, "2", blockLabel)
	topologyJob("tolerating", 1, "1", rackLabel, corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists,
		Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(tolerated / time.Second))})
	topologyJob("stopped", 1, "1", rackLabel)
	placed := map[string]map[string]int{}
	for _, job := range append(slices.Clone(kept), "tolerating", "stopped") {
		placed[job] = waitNodes(t, s.ns, job)
		wl := workloadOf(t, getJob(t, s.ns, job))
		if slices.Contains(kept, job) {
			s.admissions[job] = wl.Status.Admission
			continue
		}
		s.failing[job], s.failingWl[job] = slices.Collect(maps.Keys(placed[job]))[0], wl.Name
	}
	s.stoppedPod = runPlacedPod(t, s.ns, s.failingWl["stopped"], s.failing["stopped"])
	failedRacks := map[string]bool{}
	for _, node := range s.failing {
		failedRacks[s.labels[node][rackLabel]] = true
	}
	var targets []string
	for _, job := range kept {
		for _, node := range slices.Sorted(maps.Keys(placed[job])) {
			if !failedRacks[s.labels[node][rackLabel]] && !slices.Contains(targets, node) {
				targets = append(targets, node)
			}
		}
	}
	if len(targets) < 3 {
		t.Fatalf("placements %v leave %v outside the racks of the failing nodes: need three nodes to flap", placed, targets)
	}
	s.flapping, s.recreated, s.relabelled = targets[0], targets[1], targets[2]
	t.Logf("placed %v; flapping %s, recreated %s, relabelled %s, failing %v", placed, s.flapping, s.recreated, s.relabelled, s.failing)
	return s
}

// runPlacedPod creates a pod of a workload placed by topology, bound to
// node and running, as the job controller and the kubelet would.
func runPlacedPod(t *testing.T, ns, workload, node string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workload + "-pod",
		Labels:      map[string]string{jobframework.TASLabel: jobframework.TASLabelValue, jobframework.PodSetLabel: "main"},
		Annotations: map[string]string{jobframework.WorkloadAnnotation: workload}},
		Spec: corev1.PodSpec{NodeName: node, NodeSelector: map[string]string{corev1.LabelHostname: node},
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
	create(t, p)
	setPodPhase(t, p, corev1.PodRunning)
	return p
}

// restartWhileFlapping stops the manager, fails and flaps nodes while none
// runs, starts a new one and flaps nodes while it starts.
func (s *flapScenario) restartWhileFlapping(mutate ...func(*configapi.Configuration)) {
	t := s.t
	if err := current.Stop(); err != nil {
		t.Fatal(err)
	}
	must(t, setNodeHealth(s.flapping, false))
	must(t, setNodeHealth(s.flapping, true))
	must(t, setNodeHealth(s.flapping, false))
	must(t, recreateNode(t, s.recreated, s.labels[s.recreated]))
	must(t, setNodeLabels(s.relabelled, outOfTopology(s.labels[s.relabelled])))
	for _, node := range s.failing {
		must(t, setNodeHealth(node, false))
	}
	setPodPhase(t, s.stoppedPod, corev1.PodFailed)
	time.Sleep(tolerated + time.Second)

	during := make(chan error, 1)
	go func() {
		steps := []func() error{
			func() error { return setNodeHealth(s.flapping, true) },
			func() error { return setNodeLabels(s.relabelled, s.labels[s.relabelled]) },
			func() error { return setNodeHealth(s.flapping, false) },
			func() error { return setNodeHealth(s.flapping, true) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				during <- err
				return
			}
			time.Sleep(300 * time.Millisecond)
		}
		during <- nil
	}()
	startManager(t, mutate...)
	must(t, <-during)
}

// waitMovedOff waits until a job placed on a failed node is placed, and
// admitted, elsewhere: its pods there moved, or it was evicted and placed
// again.
func (s *flapScenario) waitMovedOff(job, node string) {
	eventually(s.t, job+" placed off "+node, func() error {
		wl := workloadOf(s.t, getJob(s.t, s.ns, job))
		if wl.Status.Admission == nil || !isTrue(wl, kueue.WorkloadAdmitted) {
			return fmt.Errorf("not admitted: QuotaReserved %+v", condition(wl, kueue.WorkloadQuotaReserved))
		}
		if nodes := waitNodes(s.t, s.ns, job); nodes[node] > 0 {
			return fmt.Errorf("placed on %v", nodes)
		}
		return nil
	})
}

func isTrue(wl *kueue.Workload, typ string) bool {
	c := condition(wl, typ)
	return c != nil && c.Status == metav1.ConditionTrue
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// flapTopology creates a namespace and eight Ready 4-CPU nodes labelled
// pool=<ns>-tas in two blocks of two racks of two nodes, a Topology block ->
// rack -> hostname, its flavor, a ClusterQueue of 100 CPUs (the topology,
// not the quota, limits admission) and LocalQueue "lq". It returns every
// node's labels.
func flapTopology(t *testing.T) (ns, cq string, nodeLabels map[string]map[string]string) {
	t.Helper()
	ns, err := env.CreateNamespace(context.Background(), "flap")
	if err != nil {
		t.Fatal(err)
	}
	fl, topo, cq := ns+"-tas", ns+"-topo", ns+"-cq"
	nodeLabels = map[string]map[string]string{}
	for i := range 8 {
		name := fmt.Sprintf("%s-n%d", ns, i)
		nodeLabels[name] = map[string]string{"pool": fl, blockLabel: fmt.Sprintf("b%d", i/4), rackLabel: fmt.Sprintf("r%d", i/2),
			corev1.LabelHostname: name}
		must(t, createReadyNode(t, name, nodeLabels[name]))
	}
	create(t,
		&kueue.Topology{ObjectMeta: metav1.ObjectMeta{Name: topo}, Spec: kueue.TopologySpec{Levels: []kueue.TopologyLevel{
			{NodeLabel: blockLabel}, {NodeLabel: rackLabel}, {NodeLabel: corev1.LabelHostname}}}},
		&kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: fl}, Spec: kueue.ResourceFlavorSpec{
			NodeLabels: map[string]string{"pool": fl}, TopologyName: (*kueue.TopologyReference)(&topo)}},
		&kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}, Spec: kueue.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{},
			ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueue.FlavorQuotas{{Name: kueue.ResourceFlavorReference(fl),
					Resources: []kueue.ResourceQuota{{Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("100")}}}}}},
		}},
		&kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(cq)}},
	)
	return ns, cq, nodeLabels
}

// createReadyNode creates a Ready 4-CPU node, untainted as the node
// controller would leave it (the API server taints a new node not-ready),
// deleted at the end of the test.
func createReadyNode(t *testing.T, name string, labels map[string]string) error {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: maps.Clone(labels)}}
	if err := env.Client.Create(ctx, node); err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	})
	four := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}
	node.Status = corev1.NodeStatus{Allocatable: four, Capacity: four,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}}
	if err := env.Client.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("setting node %s ready: %w", name, err)
	}
	node.Spec.Taints = nil
	if err := env.Client.Update(ctx, node); err != nil {
		return fmt.Errorf("untainting node %s: %w", name, err)
	}
	return nil
}

// recreateNode deletes a node, waits until it is gone, and creates it
// again with the same name and labels.
func recreateNode(t *testing.T, name string, labels map[string]string) error {
	ctx := context.Background()
	if err := env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return fmt.Errorf("deleting node %s: %w", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &corev1.Node{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to go: %w", name, err)
	}
	return createReadyNode(t, name, labels)
}

// setNodeHealth plays the kubelet and the node controller: the node's
// Ready condition, and the not-ready NoExecute taint (added at the time
// it goes not ready, lifted when it is ready).
func setNodeHealth(name string, ready bool) error {
	return updateNode(name, func(n *corev1.Node) (status bool) {
		for i := range n.Status.Conditions {
			if n.Status.Conditions[i].Type == corev1.NodeReady {
				n.Status.Conditions[i].Status = map[bool]corev1.ConditionStatus{true: corev1.ConditionTrue, false: corev1.ConditionFalse}[ready]
			}
		}
		return true
	}, func(n *corev1.Node) {
		n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady })
		if !ready {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute,
				TimeAdded: ptr.To(metav1.Now())})
		}
	})
}

// setNodeLabels replaces a node's labels.
func setNodeLabels(name string, labels map[string]string) error {
	return updateNode(name, nil, func(n *corev1.Node) { n.Labels = maps.Clone(labels) })
}

// outOfTopology returns labels without the topology's block and rack.
func outOfTopology(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	delete(out, blockLabel)
	delete(out, rackLabel)
	return out
}

// updateNode changes a node's status (when status is set) and then its
// spec and labels, retrying on conflicts.
func updateNode(name string, status func(*corev1.Node) bool, spec func(*corev1.Node)) error {
	ctx := context.Background()
	if status != nil {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			var n corev1.Node
			if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
				return err
			}
			status(&n)
			return env.Client.Status().Update(ctx, &n)
		})
		if err != nil {
			return fmt.Errorf("updating the status of node %s: %w", name, err)
		}
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var n corev1.Node
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			return err
		}
		spec(&n)
		return env.Client.Update(ctx, &n)
	})
	if err != nil {
		return fmt.Errorf("updating node %s: %w", name, err)
	}
	return nil
}

// workloadHistory is what a watch of a namespace's Workloads saw.
type workloadHistory struct {
	// violations: an unhealthyNodes list naming a node twice; a workload
	// other than watched evicted or requeued for node failures.
	violations []string
	// evictions counts, per workload, its NodeFailures evictions (distinct
	// transitions of Evicted to True).
	evictions map[string]int
	// assignments lists, per workload, the distinct topology assignments of
	// its first PodSet.
	assignments map[string][]*kueue.TopologyAssignment
	// unhealthy lists, per workload, the nodes its unhealthyNodes named.
	unhealthy map[string][]string
}

// watchWorkloads watches the Workloads of ns until the test ends, and
// returns a function giving what it saw so far. Every version counts, not
// only those a poll would catch. Only the workloads named failing may be
// evicted.
func watchWorkloads(t *testing.T, ns string, failing []string) func() workloadHistory {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan chan workloadHistory)
	h := workloadHistory{evictions: map[string]int{}, assignments: map[string][]*kueue.TopologyAssignment{}, unhealthy: map[string][]string{}}
	evictedAt := map[string]metav1.Time{}
	see := func(wl *kueue.Workload) {
		names := map[string]bool{}
		for _, u := range wl.Status.UnhealthyNodes {
			if names[u.Name] {
				h.violations = append(h.violations, fmt.Sprintf("%s: unhealthyNodes %v names %s twice", wl.Name, wl.Status.UnhealthyNodes, u.Name))
			}
			names[u.Name] = true
			if !slices.Contains(h.unhealthy[wl.Name], u.Name) {
				h.unhealthy[wl.Name] = append(h.unhealthy[wl.Name], u.Name)
			}
		}
		if c := condition(wl, kueue.WorkloadEvicted); !slices.Contains(failing, wl.Name) && c != nil && c.Status == metav1.ConditionTrue {
			h.violations = append(h.violations, fmt.Sprintf("%s evicted: %s: %s", wl.Name, c.Reason, c.Message))
		}
		if c := condition(wl, kueue.WorkloadRequeued); !slices.Contains(failing, wl.Name) && c != nil && c.Reason == kueue.WorkloadEvictedByNodeFailures {
			h.violations = append(h.violations, fmt.Sprintf("%s requeued after node failures: %s", wl.Name, c.Message))
		}
		if c := condition(wl, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueue.WorkloadEvictedByNodeFailures &&
			!evictedAt[wl.Name].Time.Equal(c.LastTransitionTime.Time) {
			evictedAt[wl.Name] = c.LastTransitionTime
			h.evictions[wl.Name]++
		}
		if wl.Status.Admission != nil && len(wl.Status.Admission.PodSetAssignments) > 0 {
			if ta := wl.Status.Admission.PodSetAssignments[0].TopologyAssignment; ta != nil &&
				!slices.ContainsFunc(h.assignments[wl.Name], func(o *kueue.TopologyAssignment) bool { return equality.Semantic.DeepEqual(o, ta) }) {
				h.assignments[wl.Name] = append(h.assignments[wl.Name], ta.DeepCopy())
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &kueue.WorkloadList{}, client.InNamespace(ns))
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for open := true; open; {
				select {
				case ev, ok := <-w.ResultChan():
					if wl, isWl := ev.Object.(*kueue.Workload); ok && isWl {
						see(wl)
					}
					open = ok
				case reply := <-results:
					reply <- copyHistory(h)
				case <-ctx.Done():
					open = false
				}
			}
			w.Stop()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() workloadHistory {
		reply := make(chan workloadHistory, 1)
		results <- reply
		return <-reply
	}
}

func copyHistory(h workloadHistory) workloadHistory {
	return workloadHistory{violations: slices.Clone(h.violations), evictions: maps.Clone(h.evictions), assignments: maps.Clone(h.assignments),
		unhealthy: maps.Clone(h.unhealthy)}
}

// auditQueue checks the ClusterQueue's status against the namespace's
// Workloads (all of its): the CPU reserved and used, and the counts, are
// the sums over the workloads holding a reservation and over the admitted
// ones.
func auditQueue(ns, cq string) error {
	ctx := context.Background()
	var wls kueue.WorkloadList
	if err := env.Client.List(ctx, &wls, client.InNamespace(ns)); err != nil {
		return err
	}
	var q kueue.ClusterQueue
	if err := env.Client.Get(ctx, client.ObjectKey{Name: cq}, &q); err != nil {
		return err
	}
	reserved, used := resource.Quantity{}, resource.Quantity{}
	var reserving, admitted int32
	for i := range wls.Items {
		wl := &wls.Items[i]
		if wl.Status.Admission == nil || !isTrue(wl, kueue.WorkloadQuotaReserved) || isTrue(wl, kueue.WorkloadFinished) {
			continue
		}
		reserving++
		for _, psa := range wl.Status.Admission.PodSetAssignments {
			cpu := psa.ResourceUsage[corev1.ResourceCPU]
			reserved.Add(cpu)
			if isTrue(wl, kueue.WorkloadAdmitted) {
				used.Add(cpu)
			}
		}
		if isTrue(wl, kueue.WorkloadAdmitted) {
			admitted++
		}
	}
	total := func(usage []kueue.FlavorUsage) resource.Quantity {
		var sum resource.Quantity
		for _, f := range usage {
			for _, r := range f.Resources {
				if r.Name == corev1.ResourceCPU {
					sum.Add(r.Total)
				}
			}
		}
		return sum
	}
	st := q.Status
	if r, u := total(st.FlavorsReservation), total(st.FlavorsUsage); r.Cmp(reserved) != 0 || u.Cmp(used) != 0 ||
		st.ReservingWorkloads != reserving || st.AdmittedWorkloads != admitted {
		return fmt.Errorf("ClusterQueue reserves %s CPU for %d workloads and uses %s for %d; the workloads hold %s in %d and %s in %d admitted",
			r.String(), st.ReservingWorkloads, u.String(), st.AdmittedWorkloads, reserved.String(), reserving, used.String(), admitted)
	}
	return nil
}
