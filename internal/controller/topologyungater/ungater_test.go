package topologyungater

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/tas"
)

const (
	rack      = "example.com/rack"
	indexKey  = "example.com/index"
	groupKey  = "example.com/group"
	namespace = "ns"
)

// racks is an assignment over racks r1 and r2 with these pod counts.
func racks(r1, r2 int32) *kueue.TopologyAssignment {
	return tas.Encode([]string{rack}, []tas.Domain{{Values: []string{"r1"}, Count: r1}, {Values: []string{"r2"}, Count: r2}})
}

// workload is Workload "wl" of one PodSet "main" of count pods indexed by
// indexKey, admitted with assignment (nil: none).
func workload(count int32, assignment *kueue.TopologyAssignment) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "wl", Namespace: namespace},
		Spec: kueue.WorkloadSpec{PodSets: []kueue.PodSet{{Name: "main", Count: count,
			TopologyRequest: &kueue.PodSetTopologyRequest{Required: ptr.To(rack), PodIndexLabel: ptr.To(indexKey)}}}},
		Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq",
			PodSetAssignments: []kueue.PodSetAssignment{{Name: "main", Count: ptr.To(count), TopologyAssignment: assignment}}}}}
	return wl
}

// pod is a gated pod of the Workload's PodSet "main" with that index
// ("" for none).
func pod(name, index string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels:      map[string]string{jobframework.PodSetLabel: "main", jobframework.TASLabel: "true"},
		Annotations: map[string]string{jobframework.WorkloadAnnotation: "wl"}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"pool": "tas"},
			SchedulingGates: []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}},
			Containers:      []corev1.Container{{Name: "c", Image: "img"}}}}
	if index != "" {
		p.Labels[indexKey] = index
	}
	return p
}

// placed is a pod already running in that rack.
func placed(name, index, r string) *corev1.Pod {
	p := pod(name, index)
	p.Spec.SchedulingGates = nil
	p.Spec.NodeSelector[rack] = r
	p.Spec.NodeName = "node-" + r
	p.Status.Phase = corev1.PodRunning
	return p
}

type fixture struct {
	c        client.Client
	recorder *record.FakeRecorder
	r        *Reconciler
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&corev1.Pod{}, indexWorkload, workloadIndex).WithStatusSubresource(&corev1.Pod{}).Build()
	rec := record.NewFakeRecorder(100)
	return &fixture{c: c, recorder: rec, r: &Reconciler{Client: c, Pods: c, Recorder: rec}}
}

func (f *fixture) reconcile(t *testing.T) {
	t.Helper()
	if _, err := f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: "wl"}}); err != nil {
		t.Fatal(err)
	}
}

// rackOf reads a pod back: its rack, or "gated" while it keeps the gate.
func (f *fixture) rackOf(t *testing.T, name string) string {
	t.Helper()
	var p corev1.Pod
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: name}, &p); err != nil {
		t.Fatal(err)
	}
	if jobframework.HasTopologyGate(&p) {
		return "gated"
	}
	if p.Spec.NodeSelector["pool"] != "tas" {
		t.Errorf("pod %s lost its own node selector: %v", name, p.Spec.NodeSelector)
	}
	return p.Spec.NodeSelector[rack]
}

func (f *fixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func expectRacks(t *testing.T, f *fixture, want map[string]string) {
	t.Helper()
	for name, r := range want {
		if got := f.rackOf(t, name); got != r {
			t.Errorf("pod %s: %s, want %s", name, got, r)
		}
	}
}

func TestPodsAreRankedByIndexIntoTheDomains(t *testing.T) {
	f := newFixture(t, workload(4, racks(2, 2)), pod("p-a", "3"), pod("p-b", "0"), pod("p-c", "2"), pod("p-d", "1"))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"p-b": "r1", "p-d": "r1", "p-c": "r2", "p-a": "r2"})
	if ev := strings.Join(f.events(), "\n"); !strings.Contains(ev, ReasonUngated) || strings.Contains(ev, "Warning") {
		t.Errorf("events %q, want one Normal %s and no warning", ev, ReasonUngated)
	}
	// A second pass finds nothing to do.
	f.reconcile(t)
	if ev := f.events(); len(ev) != 0 {
		t.Errorf("a second pass recorded %v", ev)
	}
}

func TestSubGroupsAndOffsetsRankPods(t *testing.T) {
	wl := workload(4, racks(2, 2))
	tr := wl.Spec.PodSets[0].TopologyRequest
	tr.SubGroupIndexLabel, tr.SubGroupCount = ptr.To(groupKey), ptr.To[int32](2)
	var objs []client.Object
	objs = append(objs, wl)
	for job := range 2 {
		for i := range 2 {
			// Each Job's pods count from 1 (an offset of 1).
			p := pod(fmt.Sprintf("job%d-%d", job, i), fmt.Sprint(i+1))
			p.Labels[groupKey] = fmt.Sprint(job)
			p.Annotations[jobframework.PodIndexOffsetAnnotation] = "1"
			objs = append(objs, p)
		}
	}
	f := newFixture(t, objs...)
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"job0-0": "r1", "job0-1": "r1", "job1-0": "r2", "job1-1": "r2"})
}

func TestPodsAlreadyPlacedCount(t *testing.T) {
	// Pod 1 failed and is replaced: the replacement takes its place in r1;
	// pods 0, 2 and 3 keep theirs.
	failed := placed("p-1-old", "1", "r1")
	failed.Status.Phase = corev1.PodFailed
	f := newFixture(t, workload(4, racks(2, 2)), placed("p-0", "0", "r1"), failed, placed("p-2", "2", "r2"),
		placed("p-3", "3", "r2"), pod("p-1-new", "1"))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"p-1-new": "r1"})
	// Without an index, a pod goes where there is room: r2, as r1 is full.
	f = newFixture(t, workload(4, racks(2, 2)), placed("x", "", "r1"), placed("y", "", "r1"), placed("z", "", "r2"), pod("new", ""))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"new": "r2"})
}

// A pod sent to a domain the assignment no longer has (a failed node's
// share moved to rack r1 after it was ungated) is failed with
// TerminatedByKueue, so that its job makes a new one, which goes to r1;
// the pods in the assignment's racks are left alone.
func TestStrayPodIsFailedAndItsReplacementPlaced(t *testing.T) {
	stray := placed("p-1", "1", "r3")
	stray.Spec.NodeName, stray.Status.Phase = "", corev1.PodPending
	f := newFixture(t, workload(4, racks(2, 2)), placed("p-0", "0", "r1"), stray, placed("p-2", "2", "r2"),
		placed("p-3", "3", "r2"), pod("p-1-new", "1"))
	f.reconcile(t)
	var got corev1.Pod
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: "p-1"}, &got); err != nil {
		t.Fatal(err)
	}
	c := podCondition(&got, ConditionTerminatedByKueue)
	if got.Status.Phase != corev1.PodFailed || c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonUnschedulableOnAssignedNode ||
		!strings.Contains(c.Message, rack+"=r3") {
		t.Errorf("stray pod: phase %s, condition %+v; want Failed with %s naming its rack", got.Status.Phase, c, ConditionTerminatedByKueue)
	}
	expectRacks(t, f, map[string]string{"p-1-new": "r1", "p-0": "r1", "p-2": "r2", "p-3": "r2"})
	for _, name := range []string{"p-0", "p-2", "p-3"} {
		if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: name}, &got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s in the assignment: phase %s", name, got.Status.Phase)
		}
	}
	var evented bool
	for _, e := range f.events() {
		evented = evented || strings.HasPrefix(e, "Normal "+ReasonPodTerminated)
	}
	if !evented {
		t.Errorf("no %s event", ReasonPodTerminated)
	}
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestExcessPodStaysGatedWithAWarning(t *testing.T) {
	f := newFixture(t, workload(3, racks(2, 1)), pod("a", ""), pod("b", ""), pod("c", ""), pod("d", ""))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"a": "r1", "b": "r1", "c": "r2", "d": "gated"})
	var warned bool
	for _, e := range f.events() {
		if strings.HasPrefix(e, "Warning "+ReasonNoDomain) && strings.Contains(e, "room for 3 pods") {
			warned = true
		}
	}
	if !warned {
		t.Error("the pod left over gets no Warning event saying why")
	}
}

func TestPodsWaitForAnAssignment(t *testing.T) {
	f := newFixture(t, workload(2, nil), pod("a", "0"), pod("b", "1"))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"a": "gated", "b": "gated"})
	wl := workload(2, nil)
	wl.Status.Admission = nil
	f = newFixture(t, wl, pod("a", "0"))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"a": "gated"})
	// Pods of another Workload, or another PodSet, are not touched.
	other := pod("other", "0")
	other.Annotations[jobframework.WorkloadAnnotation] = "wl2"
	otherSet := pod("other-set", "0")
	otherSet.Labels[jobframework.PodSetLabel] = "workers"
	f = newFixture(t, workload(2, racks(1, 1)), other, otherSet)
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"other": "gated", "other-set": "gated"})
}

func TestMalformedAssignmentIsReportedNotFatal(t *testing.T) {
	bad := racks(2, 2)
	bad.Slices[0].ValuesPerLevel = nil
	f := newFixture(t, workload(4, bad), pod("a", "0"))
	f.reconcile(t)
	expectRacks(t, f, map[string]string{"a": "gated"})
	ev := strings.Join(f.events(), "\n")
	if !strings.Contains(ev, "Warning "+ReasonBadAssignment) || !strings.Contains(ev, "valuesPerLevel") {
		t.Errorf("events %q, want a Warning naming the malformed field", ev)
	}
}

func TestMultiLevelAssignmentSetsEveryLevel(t *testing.T) {
	levels := []string{"example.com/block", rack}
	a := tas.Encode(levels, []tas.Domain{{Values: []string{"b1", "r1"}, Count: 1}, {Values: []string{"b1", "r2"}, Count: 1}})
	f := newFixture(t, workload(2, a), pod("a", "0"), pod("b", "1"))
	f.reconcile(t)
	var p corev1.Pod
	if err := f.c.Get(context.Background(), types.NamespacedName{Namespace: namespace, Name: "b"}, &p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeSelector["example.com/block"] != "b1" || p.Spec.NodeSelector[rack] != "r2" || len(p.Spec.SchedulingGates) != 0 {
		t.Errorf("pod b: node selector %v gates %v, want block b1, rack r2, no gate", p.Spec.NodeSelector, p.Spec.SchedulingGates)
	}
}

func TestPlaceRespectsTheRankSlotAndNodeSelectors(t *testing.T) {
	levels := []string{rack}
	domains := []tas.Domain{{Values: []string{"r1"}, Count: 2}, {Values: []string{"r2"}, Count: 2}, {Values: []string{"r3"}, Count: 1}}
	members := []member{
		{name: "running-r2", nodeSelector: map[string]string{rack: "r2"}, rank: -1},
		{name: "rank2", gated: true, rank: 2},
		{name: "rank3", gated: true, rank: 3},
		{name: "pinned", gated: true, rank: -1, nodeSelector: map[string]string{rack: "r1"}},
		{name: "free", gated: true, rank: -1},
		{name: "late", gated: true, rank: -1},
	}
	got := place(levels, domains, members)
	want := map[string]int{"rank2": 1, "rank3": 2, "pinned": 0, "free": 0}
	for name, d := range want {
		if i, ok := got.domain[name]; !ok || i != d {
			t.Errorf("%s: domain %d (%v), want %d", name, i, ok, d)
		}
	}
	if _, ok := got.unplaced["late"]; !ok || len(got.domain) != 4 {
		t.Errorf("placement %+v, want late unplaced", got)
	}
}

func TestRanks(t *testing.T) {
	ix := indexing{label: indexKey, subGroupLabel: groupKey, subGroupCount: 2}
	cases := []struct {
		labels map[string]string
		offset int
		want   int
	}{
		{map[string]string{indexKey: "1", groupKey: "1"}, 0, 4},
		{map[string]string{indexKey: "2", groupKey: "0"}, 1, 1},
		{map[string]string{indexKey: "x", groupKey: "0"}, 0, -1},
		{map[string]string{indexKey: "1", groupKey: "2"}, 0, -1},
		{map[string]string{indexKey: "0"}, 1, -1},
		{map[string]string{}, 0, -1},
	}
	for _, c := range cases {
		if got := ix.rankOf(c.labels, c.offset, 6); got != c.want {
			t.Errorf("rankOf(%v, offset %d) = %d, want %d", c.labels, c.offset, got, c.want)
		}
	}
}

func TestTrimKeepsWhatTheUngaterReads(t *testing.T) {
	p := placed("a", "0", "r1")
	p.Annotations[corev1.LastAppliedConfigAnnotation] = "{}"
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: jobframework.TopologyGate}}
	out, err := trimPod(p)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if len(got.Spec.Containers) != 0 || got.ManagedFields != nil || got.Annotations[corev1.LastAppliedConfigAnnotation] != "" {
		t.Errorf("trimmed pod keeps %+v", got)
	}
	if got.Spec.NodeSelector[rack] != "r1" || !jobframework.HasTopologyGate(got) || got.Labels[indexKey] != "0" ||
		got.Annotations[jobframework.WorkloadAnnotation] != "wl" || got.Status.Phase != corev1.PodRunning || got.Spec.NodeName == "" {
		t.Errorf("trimmed pod lost what the ungater reads: %+v", got)
	}
}

// Lifting the topology gate records kueue_pod_scheduling_gate_removal_seconds
// for the Workload's ClusterQueue, from its quota reservation.
func TestGateRemovalIsMeasured(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := metrics.Register(reg); err != nil {
		t.Fatal(err)
	}
	wl := workload(2, racks(1, 1))
	wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-3 * time.Second))}}
	f := newFixture(t, wl, pod("p-a", "0"), pod("p-b", "1"))
	f.reconcile(t)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != "kueue_pod_scheduling_gate_removal_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["name"] == jobframework.TopologyGate && labels["cluster_queue"] == "cq" &&
				m.GetHistogram().GetSampleCount() == 1 && m.GetHistogram().GetSampleSum() >= 3 {
				return
			}
		}
	}
	t.Fatal("no observation of the topology gate's removal for ClusterQueue cq")
}

// Only a new or changed topology assignment wakes the ungater for a
// Workload; its other status writes do not.
func TestAssignmentChanged(t *testing.T) {
	none := workload(2, nil)
	one := workload(2, racks(1, 1))
	other := workload(2, racks(2, 0))
	cond := one.DeepCopy()
	cond.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue}}
	cases := []struct {
		name     string
		old, new *kueue.Workload
		want     bool
	}{
		{"assignment appears", none, one, true},
		{"assignment changes", one, other, true},
		{"a condition changes", one, cond, false},
		{"no assignment", none, none, false},
	}
	for _, c := range cases {
		if got := assignmentChanged(c.old, c.new); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
