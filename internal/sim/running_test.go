package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scheduling"
)

// oneQueue is a ClusterQueue "cq" of 4 cpu in flavor "f", LocalQueue
// "ns/lq".
func oneQueue() *Setup {
	cq := &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: kueue.ClusterQueueSpec{
		NamespaceSelector: &metav1.LabelSelector{},
		ResourceGroups: []kueue.ResourceGroup{{CoveredResources: []corev1.ResourceName{"cpu"}, Flavors: []kueue.FlavorQuotas{
			{Name: "f", Resources: []kueue.ResourceQuota{{Name: "cpu", NominalQuota: resource.MustParse("4")}}}}}}}}
	lq := &kueue.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lq"}, Spec: kueue.LocalQueueSpec{ClusterQueue: "cq"}}
	return &Setup{Flavors: []*kueue.ResourceFlavor{{ObjectMeta: metav1.ObjectMeta{Name: "f"}}},
		ClusterQueues: []*kueue.ClusterQueue{cq}, LocalQueues: []*kueue.LocalQueue{lq}}
}

func cpuPodSets(cpu string) []kueue.PodSet {
	return []kueue.PodSet{{Name: "main", Count: 1, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse(cpu)}}}}}}}}
}

// cpuAdmission is an admission in ClusterQueue cq (flavor f) of one pod
// of cpu.
func cpuAdmission(cpu string) *kueue.Admission {
	return &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptrTo[int32](1),
		Flavors:       map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "f"},
		ResourceUsage: corev1.ResourceList{"cpu": resource.MustParse(cpu)}}}}
}

// A workload running at the start holds its quota until what is left of
// its run ends: a pending one that needs that quota is admitted then, and
// the pending ones keep their creation order.
func TestRunningAtStartHoldsQuotaUntilItEnds(t *testing.T) {
	adm := cpuAdmission("4")
	trace := []Workload{
		{Namespace: "ns", Name: "running", Queue: "lq", Runtime: 30 * time.Second, PodSets: cpuPodSets("4"), Admission: adm, CreatedBefore: time.Hour},
		{Namespace: "ns", Name: "second", Queue: "lq", Runtime: time.Minute, PodSets: cpuPodSets("4"), CreatedBefore: time.Minute},
		{Namespace: "ns", Name: "first", Queue: "lq", Runtime: time.Minute, PodSets: cpuPodSets("4"), CreatedBefore: 2 * time.Minute},
	}
	admitted := map[string]time.Duration{}
	var firstReason string
	res, err := Run(oneQueue(), trace, Options{Scheduling: scheduling.Options{}, OnDecision: func(at time.Duration, d *scheduling.Decision) {
		if d.Admit {
			if _, ok := admitted[d.Workload.Key.Name]; !ok {
				admitted[d.Workload.Key.Name] = at
			}
		} else if d.Workload.Key.Name == "first" && firstReason == "" {
			firstReason = d.Explain()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := admitted["running"]; ok {
		t.Errorf("the running workload was admitted again")
	}
	if admitted["first"] != 30*time.Second || admitted["second"] != 90*time.Second {
		t.Errorf("admitted at %v; want first at 30s (when running ends), second at 90s", admitted)
	}
	if firstReason == "" || !strings.Contains(firstReason, "cpu") {
		t.Errorf("first's first refusal %q does not explain the cpu shortage", firstReason)
	}
	if res.Summary.Finished != 3 {
		t.Errorf("finished %d of 3", res.Summary.Finished)
	}
}

// In a stall nothing lands: a workload running at the start whose end
// falls in it gives its quota back when the stall ends, and the pending
// one is admitted only then.
func TestStallDelaysEnds(t *testing.T) {
	adm := cpuAdmission("4")
	trace := []Workload{
		{Namespace: "ns", Name: "running", Queue: "lq", Runtime: 30 * time.Second, PodSets: cpuPodSets("4"), Admission: adm, CreatedBefore: time.Hour},
		{Namespace: "ns", Name: "next", Queue: "lq", Runtime: time.Minute, PodSets: cpuPodSets("4")},
	}
	admitted := time.Duration(-1)
	lat := Latency{Stalls: []Stall{{Start: 20 * time.Second, Duration: 15 * time.Second}}}
	_, err := Run(oneQueue(), trace, Options{Latency: lat, OnDecision: func(at time.Duration, d *scheduling.Decision) {
		if d.Admit && d.Workload.Key.Name == "next" && admitted < 0 {
			admitted = at
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if admitted != 35*time.Second {
		t.Errorf("next admitted at %v, want 35s (running's end at 30s lands when the stall ends)", admitted)
	}
}

// An admission in a ClusterQueue the setup lacks is an error, not a
// silently free quota.
func TestRunningAtStartInAnUnknownQueueFails(t *testing.T) {
	adm := &kueue.Admission{ClusterQueue: "other", PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptrTo[int32](1),
		Flavors: map[corev1.ResourceName]kueue.ResourceFlavorReference{"cpu": "f"}, ResourceUsage: corev1.ResourceList{"cpu": resource.MustParse("4")}}}}
	_, err := Run(oneQueue(), []Workload{{Namespace: "ns", Name: "w", Queue: "lq", Runtime: time.Second, PodSets: cpuPodSets("4"), Admission: adm}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "other") {
		t.Fatalf("Run() = %v, want an error naming ClusterQueue other", err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// A setup written by WriteSetup reads back the same.
func TestWriteSetupReadsBack(t *testing.T) {
	s := oneQueue()
	s.Namespaces = map[string]map[string]string{"ns": {"team": "a"}, "plain": nil}
	var buf bytes.Buffer
	if err := WriteSetup(&buf, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSetup(&buf)
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", buf.String(), err)
	}
	if len(back.Flavors) != len(s.Flavors) || len(back.ClusterQueues) != 1 || len(back.LocalQueues) != 1 ||
		!apiequality.Semantic.DeepEqual(back.ClusterQueues[0].Spec, s.ClusterQueues[0].Spec) || back.LocalQueues[0].Namespace != s.LocalQueues[0].Namespace ||
		back.Namespaces["ns"]["team"] != "a" {
		t.Fatalf("read back %+v from:\n%s", back, buf.String())
	}
}

// A victim whose admission is still being written is marked as being
// evicted at once, as the manager does, and its eviction is sent when the
// admission lands (one write at a time per workload): the preemptor does
// not choose it anew in the cycles in between, and takes the quota when
// the eviction lands.
func TestEvictionOfAnAdmissionInFlightWaitsForItsLanding(t *testing.T) {
	setup := oneQueue()
	setup.ClusterQueues[0].Spec.Preemption = &kueue.ClusterQueuePreemption{WithinClusterQueue: kueue.PreemptionPolicyLowerPriority}
	trace := []Workload{
		{Namespace: "ns", Name: "low", Queue: "lq", Runtime: time.Minute, PodSets: cpuPodSets("4")},
		{Namespace: "ns", Name: "high", Queue: "lq", Priority: 10, Arrive: 100 * time.Millisecond, Runtime: time.Minute, PodSets: cpuPodSets("4")},
		// Arrives in between: a cycle runs while low's admission is in flight.
		{Namespace: "ns", Name: "later", Queue: "lq", Arrive: 500 * time.Millisecond, Runtime: time.Minute, PodSets: cpuPodSets("1")},
	}
	lat, err := ParseLatency("admit=fixed:1s,evict=fixed:500ms")
	if err != nil {
		t.Fatal(err)
	}
	var newEvictions []time.Duration
	highAdmitted := time.Duration(-1)
	res, err := Run(setup, trace, Options{Latency: lat, OnDecision: func(at time.Duration, d *scheduling.Decision) {
		if d.Workload.Key.Name != "high" {
			return
		}
		if d.Admit && highAdmitted < 0 {
			highAdmitted = at
		}
		for _, v := range d.Victims {
			if !v.Workload.Evicting {
				newEvictions = append(newEvictions, at)
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(newEvictions) != 1 || newEvictions[0] != 100*time.Millisecond {
		t.Errorf("high chose low as a new victim at %v, want once, at 100ms", newEvictions)
	}
	if highAdmitted != 1500*time.Millisecond {
		t.Errorf("high admitted at %v, want 1.5s (low's admission lands at 1s, its eviction 500ms later)", highAdmitted)
	}
	if got := res.Summary.Evictions; got != 1 {
		t.Errorf("%d evictions, want 1", got)
	}
}
