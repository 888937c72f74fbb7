package why

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/afs"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/scheduling"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// cluster is one ClusterQueue "cq" of 4 cpu in flavor "default", open to
// every namespace, fed by LocalQueue ml/lq.
func cluster(mutate ...func(*kueue.ClusterQueue)) *State {
	cq := kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{}, QueueingStrategy: kueue.BestEffortFIFO,
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "default", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("4")}}}}}}}}
	for _, m := range mutate {
		m(&cq)
	}
	return &State{Now: now,
		Flavors:       []kueue.ResourceFlavor{{ObjectMeta: metav1.ObjectMeta{Name: "default"}}},
		ClusterQueues: []kueue.ClusterQueue{cq},
		LocalQueues:   []kueue.LocalQueue{{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}},
		Namespaces:    map[string]map[string]string{"ml": {"team": "ml"}},
	}
}

// pending is a workload of ml/lq created age ago, asking cpu.
func pending(name, cpu string, priority int32, age time.Duration) kueue.Workload {
	return kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, UID: k8stypes.UID("uid-" + name),
		CreationTimestamp: metav1.NewTime(now.Add(-age))},
		Spec: kueue.WorkloadSpec{QueueName: "lq", Priority: ptr.To(priority), PodSets: []kueue.PodSet{{Name: "main", Count: 1,
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse(cpu)}}}}}}}}}}
}

// running is pending, admitted ranFor ago in cq on flavor default.
func running(name, cpu string, priority int32, ranFor time.Duration, maxExec int32) kueue.Workload {
	wl := pending(name, cpu, priority, ranFor+time.Minute)
	if maxExec > 0 {
		wl.Spec.MaximumExecutionTimeSeconds = ptr.To(maxExec)
	}
	at := metav1.NewTime(now.Add(-ranFor))
	wl.Status.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
		Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "default"}, ResourceUsage: corev1.ResourceList{"cpu": resource.MustParse(cpu)}}}}
	wl.Status.Conditions = []metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", LastTransitionTime: at},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", LastTransitionTime: at},
	}
	return wl
}

func explain(t *testing.T, st *State, name string, opts Options) *Explanation {
	t.Helper()
	ex, err := Explain(st, "ml", name, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Render(&b, ex); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", b.String())
	return ex
}

func wantBlocker(t *testing.T, ex *Explanation, cause, contains string) {
	t.Helper()
	for _, b := range ex.Blockers {
		if b.Cause == cause {
			if !strings.Contains(b.Message, contains) {
				t.Errorf("blocker %s says %q, want it to mention %q", cause, b.Message, contains)
			}
			return
		}
	}
	t.Errorf("blockers %+v lack %s", ex.Blockers, cause)
}

// Short of quota: the answer names the resource and flavor, the amounts,
// who holds the quota, that preemption would not help (same priority),
// the workloads ahead, and when it starts: when the holder's maximum
// execution time runs out (10 min, 2 of them gone).
func TestQuotaShortNamesHoldersAndEstimatesTheStart(t *testing.T) {
	st := cluster()
	st.Workloads = []kueue.Workload{
		running("etl-1", "3", 0, 2*time.Minute, 600),
		pending("first", "2", 0, 20*time.Minute),
		pending("train", "2", 0, 10*time.Minute),
	}
	ex := explain(t, st, "train", Options{})
	wantBlocker(t, ex, CauseQuota, "cpu")
	if ex.Ahead == nil || *ex.Ahead != 1 || ex.AheadInLocalQueue == nil || *ex.AheadInLocalQueue != 1 {
		t.Errorf("ahead = %v (%v in the LocalQueue), want 1 (first)", ex.Ahead, ex.AheadInLocalQueue)
	}
	if len(ex.Resources) != 1 {
		t.Fatalf("resources %+v, want the cpu of flavor default", ex.Resources)
	}
	r := ex.Resources[0]
	if r.Flavor != "default" || r.Need != "2" || r.Nominal != "4" || r.Used != "3" || r.Available != "1" ||
		len(r.Holders) != 1 || r.Holders[0].Workload != "ml/etl-1" || r.Holders[0].Amount != "3" {
		t.Errorf("cpu row %+v", r)
	}
	if ex.Preemption == nil || ex.Preemption.Possible {
		t.Errorf("preemption %+v, want not possible (no lower priority to preempt)", ex.Preemption)
	}
	// first (2 cpu) fits in the 1 cpu left once etl-1 ends at 8 min; so does train.
	if e := ex.Estimate; e == nil || !e.Known || e.Seconds != 480 || !strings.Contains(e.Assumption, "1 by their maximumExecutionTimeSeconds") {
		t.Errorf("estimate %+v, want 8m0s from etl-1's maximum execution time", e)
	}
}

// Finished workloads of the same LocalQueue and shape tell a running
// one's runtime when it has no maximum execution time.
func TestEstimateLearnsRuntimesFromFinishedWorkloads(t *testing.T) {
	st := cluster()
	done := running("done", "4", 0, 30*time.Minute, 0)
	done.Status.Conditions = append(done.Status.Conditions, metav1.Condition{Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue,
		Reason: "Succeeded", LastTransitionTime: metav1.NewTime(now.Add(-25 * time.Minute))})
	st.Workloads = []kueue.Workload{done, running("etl-1", "4", 0, time.Minute, 0), pending("train", "1", 0, time.Minute)}
	ex := explain(t, st, "train", Options{})
	if e := ex.Estimate; e == nil || !e.Known || e.Seconds != 240 || !strings.Contains(e.Assumption, "same LocalQueue and shape") {
		t.Errorf("estimate %+v, want 4m (5m runtime learnt from done, 1m gone)", e)
	}
}

func TestFitsNow(t *testing.T) {
	st := cluster()
	st.Workloads = []kueue.Workload{pending("train", "2", 0, time.Minute)}
	ex := explain(t, st, "train", Options{})
	if !ex.FitsNow || len(ex.Blockers) != 0 || ex.Flavors["cpu"] != "default" || ex.Estimate != nil {
		t.Errorf("explanation %+v, want it to fit now on flavor default", ex)
	}
}

// A higher priority with preemption allowed preempts the lower one.
func TestPreemptionNamesItsVictims(t *testing.T) {
	st := cluster(func(cq *kueue.ClusterQueue) {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	})
	st.Workloads = []kueue.Workload{running("batch", "4", 0, time.Minute, 0), pending("urgent", "2", 100, time.Minute)}
	ex := explain(t, st, "urgent", Options{Scheduling: scheduling.Options{Patience: 0}})
	if p := ex.Preemption; p == nil || !p.Possible || len(p.Victims) != 1 || !strings.HasPrefix(p.Victims[0], "ml/batch") {
		t.Errorf("preemption %+v, want ml/batch as the victim", p)
	}
}

// A resource the ClusterQueue has no quota for is named.
func TestResourceWithoutQuota(t *testing.T) {
	st := cluster()
	wl := pending("gpu-job", "1", 0, time.Minute)
	wl.Spec.PodSets[0].Template.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
	st.Workloads = []kueue.Workload{wl}
	ex := explain(t, st, "gpu-job", Options{NoEstimate: true})
	if len(ex.Blockers) == 0 || ex.Blockers[0].Cause == CauseQuota {
		t.Errorf("blockers %+v: a resource without quota is not a quota in use", ex.Blockers)
	}
	wantBlocker(t, ex, ex.Blockers[0].Cause, "nvidia.com/gpu")
}

func TestStoppedQueues(t *testing.T) {
	st := cluster(func(cq *kueue.ClusterQueue) { cq.Spec.StopPolicy = ptr.To(kueue.HoldAndDrain) })
	st.Workloads = []kueue.Workload{pending("train", "1", 0, time.Minute)}
	wantBlocker(t, explain(t, st, "train", Options{}), CauseClusterQueueInactive, "Stopped")

	st = cluster()
	st.LocalQueues[0].Spec.StopPolicy = ptr.To(kueue.Hold)
	st.Workloads = []kueue.Workload{pending("train", "1", 0, time.Minute)}
	wantBlocker(t, explain(t, st, "train", Options{}), CauseLocalQueueStopped, "Hold")
}

func TestMissingLocalQueue(t *testing.T) {
	st := cluster()
	wl := pending("train", "1", 0, time.Minute)
	wl.Spec.QueueName = "nope"
	st.Workloads = []kueue.Workload{wl}
	wantBlocker(t, explain(t, st, "train", Options{}), CauseLocalQueueMissing, "LocalQueue nope")
}

func TestNamespaceNotSelected(t *testing.T) {
	st := cluster(func(cq *kueue.ClusterQueue) {
		cq.Spec.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "infra"}}
	})
	st.Workloads = []kueue.Workload{pending("train", "1", 0, time.Minute)}
	wantBlocker(t, explain(t, st, "train", Options{}), CauseNamespaceNotSelected, "namespace ml")
}

func TestPendingAdmissionCheck(t *testing.T) {
	st := cluster()
	wl := running("train", "1", 0, time.Minute, 0)
	wl.Status.Conditions = wl.Status.Conditions[:1]
	wl.Status.AdmissionChecks = []kueue.AdmissionCheckState{{Name: "prov", State: kueue.CheckStatePending, Message: "waiting for capacity"}}
	st.Workloads = []kueue.Workload{wl}
	ex := explain(t, st, "train", Options{})
	if ex.Status != StatusQuotaReserved {
		t.Errorf("status %s, want %s", ex.Status, StatusQuotaReserved)
	}
	wantBlocker(t, ex, CauseChecksPending, "prov (Pending): waiting for capacity")
}

func TestBehindStrictFIFOHead(t *testing.T) {
	st := cluster(func(cq *kueue.ClusterQueue) { cq.Spec.QueueingStrategy = kueue.StrictFIFO })
	st.Workloads = []kueue.Workload{running("etl", "3", 0, time.Minute, 0), pending("head", "2", 0, 10*time.Minute),
		pending("small", "1", 0, time.Minute)}
	wantBlocker(t, explain(t, st, "small", Options{NoEstimate: true}), CauseBlockedByHead, "ml/head")
}

func TestDeactivated(t *testing.T) {
	st := cluster()
	wl := pending("train", "1", 0, time.Minute)
	wl.Spec.Active = ptr.To(false)
	st.Workloads = []kueue.Workload{wl}
	wantBlocker(t, explain(t, st, "train", Options{}), CauseDeactivated, "spec.active")
}

func TestUnknownWorkload(t *testing.T) {
	if _, err := Explain(cluster(), "ml", "ghost", Options{}); err == nil || !strings.Contains(err.Error(), "ml/ghost not found") {
		t.Fatalf("Explain() = %v, want not found", err)
	}
}

// The JSON form uses plain keys.
func TestJSONKeys(t *testing.T) {
	st := cluster()
	st.Workloads = []kueue.Workload{running("etl-1", "4", 0, time.Minute, 600), pending("train", "2", 0, time.Minute)}
	ex := explain(t, st, "train", Options{})
	data, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"blockers":`, `"resources":`, `"holders":`, `"estimate":`, `"startsIn":"9m0s"`, `"ahead":0`} {
		if !bytes.Contains(data, []byte(key)) {
			t.Errorf("JSON lacks %s: %s", key, data)
		}
	}
}

// A victim about to end by itself is waited for, not preempted, and the
// answer says so.
func TestPatienceWaitsForVictimsEndingSoon(t *testing.T) {
	st := cluster(func(cq *kueue.ClusterQueue) {
		cq.Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	})
	st.Workloads = []kueue.Workload{running("batch", "4", 0, 595*time.Second, 600), pending("urgent", "2", 100, time.Minute)}
	ex := explain(t, st, "urgent", Options{Scheduling: scheduling.Options{Patience: 10 * time.Second}})
	if p := ex.Preemption; p == nil || p.Possible || !strings.Contains(p.Message, "end soon") {
		t.Errorf("preemption %+v, want it to wait for batch, which ends within the patience", p)
	}
	if e := ex.Estimate; e == nil || e.Seconds != 5 {
		t.Errorf("estimate %+v, want 5s (batch's maximum execution time)", e)
	}
}

// A flavor whose node labels the workload's node selector excludes is
// named as ineligible.
func TestFlavorIneligible(t *testing.T) {
	st := cluster()
	st.Flavors[0].Spec.NodeLabels = map[string]string{"pool": "cpu-a"}
	wl := pending("train", "1", 0, time.Minute)
	wl.Spec.PodSets[0].Template.Spec.NodeSelector = map[string]string{"pool": "gpu-b"}
	st.Workloads = []kueue.Workload{wl}
	ex := explain(t, st, "train", Options{NoEstimate: true})
	wantBlocker(t, ex, CauseNoMatchingFlavor, "flavor default doesn't match node selector pool=gpu-b")
}

// Workloads the scheduler could never admit (no queue name, no pod sets)
// do not stop the estimate.
func TestEstimateSkipsWorkloadsOutOfThePicture(t *testing.T) {
	st := cluster()
	noQueue := pending("no-queue", "1", 0, time.Hour)
	noQueue.Spec.QueueName = ""
	empty := pending("empty", "1", 0, time.Hour)
	empty.Spec.PodSets = nil
	st.Workloads = []kueue.Workload{noQueue, empty, running("etl", "4", 0, time.Minute, 120), pending("train", "1", 0, time.Minute)}
	ex := explain(t, st, "train", Options{})
	if e := ex.Estimate; e == nil || !e.Known || e.Seconds != 60 {
		t.Errorf("estimate %+v, want 1m", e)
	}
}

// A workload whose quota fits but whose rack is taken by a pod the
// kube-scheduler placed is explained as a topology placement failure.
func TestTopologyPlacementFailed(t *testing.T) {
	st := cluster()
	st.Flavors[0].Spec = kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "tas"}, TopologyName: ptr.To[kueue.TopologyReference]("topo")}
	st.Topologies = []kueue.Topology{{ObjectMeta: metav1.ObjectMeta{Name: "topo"}, Spec: kueue.TopologySpec{
		Levels: []kueue.TopologyLevel{{NodeLabel: "rack"}, {NodeLabel: corev1.LabelHostname}}}}}
	st.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"pool": "tas", "rack": "a", corev1.LabelHostname: "n1"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("2"), "pods": resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}}
	st.Pods = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "p"}, Spec: corev1.PodSpec{NodeName: "n1",
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("1500m")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}}
	wl := pending("w", "1", 0, time.Minute)
	wl.Spec.PodSets[0].TopologyRequest = &kueue.PodSetTopologyRequest{Required: ptr.To("rack")}
	st.Workloads = []kueue.Workload{wl}
	wantBlocker(t, explain(t, st, "w", Options{}), CauseTopology, `level "rack"`)

	st.Pods = nil // the pod ended: 2 CPUs are free on the rack
	if ex := explain(t, st, "w", Options{}); !ex.FitsNow {
		t.Fatalf("fits once the pod is gone: %+v", ex.Blockers)
	}
}

// Without the right to list nodes and pods the explanation says so.
func TestTopologyUnknown(t *testing.T) {
	st := cluster()
	st.Flavors[0].Spec = kueue.ResourceFlavorSpec{NodeLabels: map[string]string{"pool": "tas"}, TopologyName: ptr.To[kueue.TopologyReference]("topo")}
	st.TopologyUnknown = true
	st.Topologies = []kueue.Topology{{ObjectMeta: metav1.ObjectMeta{Name: "topo"}, Spec: kueue.TopologySpec{
		Levels: []kueue.TopologyLevel{{NodeLabel: "rack"}}}}}
	st.Workloads = []kueue.Workload{pending("w", "1", 0, time.Minute)}
	wantBlocker(t, explain(t, st, "w", Options{}), CauseTopology, "could not be listed")
}

// A workload above its namespace's LimitRange max would fit the quota,
// but its pods would be refused: the answer says so instead of "fits".
func TestLimitRangeSetsAside(t *testing.T) {
	st := cluster()
	st.Workloads = []kueue.Workload{pending("train", "2", 0, time.Minute)}
	st.LimitRanges = []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "lr"}, Spec: corev1.LimitRangeSpec{
		Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{"cpu": resource.MustParse("1")}}}}}}
	ex := explain(t, st, "train", Options{})
	if ex.FitsNow {
		t.Error("a workload whose pods would be refused is said to fit now")
	}
	wantBlocker(t, ex, CauseSetAside, "didn't satisfy LimitRange constraints")
}

// With the manager's admission fair sharing, the LocalQueue usage its
// status published orders the queue: the older workload of the busier
// LocalQueue has the other one ahead of it.
func TestAdmissionFairSharingOrdersTheQueue(t *testing.T) {
	st := cluster(func(cq *kueue.ClusterQueue) {
		cq.Spec.AdmissionScope = &kueue.AdmissionScope{AdmissionMode: kueue.UsageBasedAdmissionFairSharing}
	})
	st.LocalQueues[0].Status.FairSharing = &kueue.LocalQueueFairSharingStatus{AdmissionFairSharingStatus: &kueue.AdmissionFairSharingStatus{
		ConsumedResources: corev1.ResourceList{"cpu": resource.MustParse("40")}, LastUpdate: metav1.NewTime(now.Add(-time.Second))}}
	st.LocalQueues = append(st.LocalQueues, kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "quiet"},
		Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}})
	quiet := pending("newer", "4", 0, time.Minute)
	quiet.Spec.QueueName = "quiet"
	st.Workloads = []kueue.Workload{running("holder", "4", 0, time.Minute, 0), pending("older", "4", 0, time.Hour), quiet}
	plain := explain(t, st, "older", Options{NoEstimate: true})
	if plain.Ahead == nil || *plain.Ahead != 0 {
		t.Fatalf("without admission fair sharing %v are ahead, want 0", plain.Ahead)
	}
	fair := explain(t, st, "older", Options{NoEstimate: true, FairAdmission: &afs.Params{HalfLife: time.Hour, Interval: time.Minute}})
	if fair.Ahead == nil || *fair.Ahead != 1 {
		t.Errorf("with admission fair sharing %v are ahead, want 1 (the quiet LocalQueue's workload)", fair.Ahead)
	}
}

// A gated workload, and one whose DRA claims cannot be charged, are said
// to be kept out and why.
func TestGatesAndClaimsSetAside(t *testing.T) {
	st := cluster()
	gated := pending("gated", "1", 0, time.Minute)
	gated.Annotations = map[string]string{kueue.AdmissionGatedByAnnotation: "example.com/approval"}
	claims := pending("claims", "1", 0, time.Minute)
	claims.Spec.PodSets[0].Template.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("missing")}}
	st.Workloads = []kueue.Workload{gated, claims}
	wantBlocker(t, explain(t, st, "gated", Options{}), CauseSetAside, "admission gates are not all removed: example.com/approval")
	lc := lifecycle.Options{RequeueAtEvictionTime: true, DeviceClasses: map[string]corev1.ResourceName{"gpu.example.com": "example.com/gpu"}}
	wantBlocker(t, explain(t, st, "claims", Options{Lifecycle: &lc}), CauseSetAside, "ResourceClaimTemplate missing of claim gpu does not exist")
	st.ClaimTemplatesUnknown = true
	ex := explain(t, st, "claims", Options{Lifecycle: &lc})
	for _, b := range ex.Blockers {
		if b.Cause == CauseSetAside {
			t.Errorf("with the templates unreadable the claims should not be counted, got %+v", b)
		}
	}
}
