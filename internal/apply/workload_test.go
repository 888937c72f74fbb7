package apply

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// admittedWith is an admitted workload whose conditions include conds.
func admittedWith(conds ...metav1.Condition) *kueue.Workload {
	wl := &kueue.Workload{Status: kueue.WorkloadStatus{Admission: &kueue.Admission{ClusterQueue: "cq"}}}
	wl.Status.Conditions = append([]metav1.Condition{
		{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved"},
		{Type: kueue.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted"},
	}, conds...)
	return wl
}

// A workload that loses its admission has no pods: PodsReady, where it
// was written, reads False/WaitForStart (as Kueue's job reconciler writes
// for a workload that is not admitted), not the True of the pods it had.
func TestLosingTheAdmissionResetsPodsReady(t *testing.T) {
	now := metav1.Now()
	ready := metav1.Condition{Type: kueue.WorkloadPodsReady, Status: metav1.ConditionTrue, Reason: kueue.WorkloadStarted}
	for name, st := range map[string]*kueue.WorkloadStatus{
		"ClearReservation": ClearReservation(admittedWith(ready), true, kueue.WorkloadEvictedByPreemption, "preempted", now),
		"Pending":          first(Pending(admittedWith(ready), "Pending", "waiting", nil, now)),
	} {
		c := meta.FindStatusCondition(st.Conditions, kueue.WorkloadPodsReady)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(kueue.WorkloadWaitForStart) {
			t.Errorf("%s: PodsReady = %+v, want False/WaitForStart", name, c)
		}
		if st.Admission != nil {
			t.Errorf("%s: admission kept", name)
		}
	}
	st := ClearReservation(admittedWith(), true, kueue.WorkloadEvictedByPreemption, "preempted", now)
	if c := meta.FindStatusCondition(st.Conditions, kueue.WorkloadPodsReady); c != nil {
		t.Errorf("PodsReady = %+v, want none added where waitForPodsReady never wrote it", c)
	}
	placed := admittedWith()
	placed.Status.ClusterName = ptr.To("worker1")
	if st := ClearReservation(placed, true, kueue.WorkloadEvictedByAdmissionCheck, "retry", now); st.ClusterName != nil {
		t.Errorf("clusterName %q kept after the reservation was cleared; a MultiKueue placement ends with it", *st.ClusterName)
	}
}

func first(st *kueue.WorkloadStatus, _ bool) *kueue.WorkloadStatus { return st }

// status.unhealthyNodes is a list-map keyed by name: the builder never
// names a node twice, whether it was already named (a workload evicted
// again with the failed nodes its status still names) or named twice in
// one call, and keeps at most MaxUnhealthyNodes.
func TestUnhealthyNodesNameEachNodeOnce(t *testing.T) {
	st := &kueue.WorkloadStatus{UnhealthyNodes: []kueue.UnhealthyNode{{Name: "node-11"}}}
	AddUnhealthyNodes(st, []string{"node-11", "node-2", "node-2"})
	if got := unhealthyNames(st); !slices.Equal(got, []string{"node-11", "node-2"}) {
		t.Errorf("unhealthyNodes %v, want node-11 and node-2 once each", got)
	}
	var many []string
	for i := range 2 * MaxUnhealthyNodes {
		many = append(many, fmt.Sprintf("n%d", i%(MaxUnhealthyNodes+2)))
	}
	st = &kueue.WorkloadStatus{}
	AddUnhealthyNodes(st, many)
	if got := unhealthyNames(st); len(got) != MaxUnhealthyNodes || got[0] != "n0" || got[MaxUnhealthyNodes-1] != fmt.Sprintf("n%d", MaxUnhealthyNodes-1) {
		t.Errorf("unhealthyNodes %v, want the first %d nodes", got, MaxUnhealthyNodes)
	}
}

// A new reservation starts with no failed nodes: those a client kept
// while clearing the last reservation are not the new assignment's.
func TestReserveClearsUnhealthyNodes(t *testing.T) {
	wl := &kueue.Workload{Status: kueue.WorkloadStatus{UnhealthyNodes: []kueue.UnhealthyNode{{Name: "node-11"}}}}
	if st := Reserve(wl, &kueue.Admission{ClusterQueue: "cq"}, nil, metav1.Now()); st.UnhealthyNodes != nil {
		t.Errorf("unhealthyNodes %v kept into a new reservation", st.UnhealthyNodes)
	}
}

func unhealthyNames(st *kueue.WorkloadStatus) []string {
	var out []string
	for _, n := range st.UnhealthyNodes {
		out = append(out, n.Name)
	}
	return out
}
