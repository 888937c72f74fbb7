package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/audit"
)

// auditNow runs the auditor, retrying while the API server cannot answer
// (it may be restarting, or etcd behind it).
func (h *harness) auditNow(t *testing.T, when string) *audit.Report {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		rep, err := audit.Run(ctx, env.Client)
		cancel()
		if err == nil {
			h.fig.audits++
			return rep
		}
		h.fig.auditRetries++
		if time.Now().After(deadline) {
			t.Fatalf("audit %s: API server unreachable for 2 minutes: %v", when, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// strictAudit requires the invariants that hold at every instant, even
// while a killed leader's last writes are still landing and before the
// next leader has caught up: no quota overcommitted, every reservation
// consistent (status.admission, QuotaReserved and Admitted are written
// together), nothing held in unknown queues. Only the ClusterQueue status
// counters may lag behind the workloads (StatusMismatch): they are
// written by the leader's status reporter up to 500 ms after a change,
// and not at all while no leader runs. They must converge once the flow
// is paused (quiescentAudit) and at the end.
func (h *harness) strictAudit(t *testing.T, when string) {
	t.Helper()
	rep := h.auditNow(t, when)
	for _, v := range rep.Violations {
		if v.Kind != audit.KindStatusMismatch {
			t.Fatalf("audit %s: %s\n%s\nholding quota:\n%s%s", when, v, rep, describeReservations(), h.problems())
		}
	}
}

// quiescentAudit pauses the flow (no creation, no workload finishing)
// until the full audit comes clean: with nothing changing, the leader
// settles its decisions and the ClusterQueue status must equal the sum
// over the workloads holding quota.
func (h *harness) quiescentAudit(t *testing.T, when string) {
	t.Helper()
	h.run.paused.Store(true)
	h.rec.reset()
	defer h.run.paused.Store(false)
	start := time.Now()
	var rep *audit.Report
	for time.Since(start) < time.Minute {
		if rep = h.auditNow(t, when); rep.OK() {
			h.fig.quiescentAudits++
			h.fig.maxSettle = max(h.fig.maxSettle, time.Since(start))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("audit %s: not clean after a minute with the flow paused:\n%s\nholding quota:\n%s%s",
		when, rep, describeReservations(), h.problems())
}

// drain waits for every workload to finish after the last fault.
func (h *harness) drain(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(h.prof.drain)
	for h.run.finished.Load() < int64(h.prof.workloads) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		h.checkReplicas(t)
	}
	if got := h.run.finished.Load(); got < int64(h.prof.workloads) {
		t.Fatalf("only %d of %d workloads (%d created) finished within %s after the last fault\nunfinished:\n%s%s",
			got, h.prof.workloads, h.run.created.Load(), h.prof.drain, describeUnfinished(), h.problems())
	}
}

// finalChecks: no workload lost, none ever reserved twice, every queue's
// usage back to zero in status, and a clean audit.
func (h *harness) finalChecks(t *testing.T) {
	t.Helper()
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(h.ns)); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i := range list.Items {
		wl := &list.Items[i]
		names[wl.Name] = true
		if !meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			t.Errorf("workload %s is not finished", wl.Name)
		}
		ev := int(reservationOf(wl).evictions)
		h.fig.evictions += ev
		if seen, history := h.obs.admissionsOf(wl.UID); seen != ev+1 {
			h.fig.unseen = append(h.fig.unseen, fmt.Sprintf("%s: %d evictions, %d reservations seen: %s",
				wl.Name, ev, seen, strings.Join(history, " ")))
		}
	}
	h.fig.workloads = len(list.Items)
	// Every eviction was followed by another admission.
	h.fig.admissions = h.fig.workloads + h.fig.evictions
	for i := range h.prof.workloads {
		if !names[workloadName(i)] {
			t.Errorf("workload %s is lost", workloadName(i))
		}
	}
	if _, problems := h.obs.report(); len(problems) > 0 {
		t.Errorf("reservations seen by the jobs:\n  %s", strings.Join(problems, "\n  "))
	}
	h.quiescentAudit(t, "at the end")
	h.checkQueuesEmpty(t)
	var lease coordinationv1.Lease
	err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: leaseNamespace,
		Name: configapi.DefaultLeaderElectionID}, &lease)
	switch {
	case err != nil:
		t.Errorf("the replicas' Lease: %v (did they run without electing a leader?)", err)
	case lease.Spec.LeaseTransitions != nil:
		h.fig.leaseTransitions = int(*lease.Spec.LeaseTransitions)
	}
	for i := range h.prof.replicas {
		for _, line := range h.refusals(replicaLog(i)) {
			t.Errorf("replica %d was refused by the API server's authorizer: %s", i, line)
		}
	}
}

// refusals are the lines of a replica's log where the API server's
// authorizer refused it something, except around an API server restart
// (a restarted kube-apiserver refuses everyone until its RBAC caches
// have synced).
func (h *harness) refusals(log string) []string {
	data, _ := os.ReadFile(log)
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.Contains(line, []byte(`forbidden: User \"system:serviceaccount:`)) {
			continue
		}
		var entry struct{ Ts string }
		if json.Unmarshal(line, &entry) == nil {
			if at, err := time.Parse(time.RFC3339, entry.Ts); err == nil && h.outages.around(at) {
				continue
			}
		}
		out = append(out, string(line))
	}
	return out
}

// checkQueuesEmpty: with every workload finished, each ClusterQueue's
// status must show no usage and no workloads (the audit compares status
// with the workloads; this says the same in plain numbers).
func (h *harness) checkQueuesEmpty(t *testing.T) {
	t.Helper()
	var cqs kueue.ClusterQueueList
	if err := env.Client.List(context.Background(), &cqs); err != nil {
		t.Fatal(err)
	}
	for _, cq := range cqs.Items {
		st := cq.Status
		if st.ReservingWorkloads != 0 || st.AdmittedWorkloads != 0 {
			t.Errorf("ClusterQueue %s: %d reserving, %d admitted workloads at the end", cq.Name,
				st.ReservingWorkloads, st.AdmittedWorkloads)
		}
		for _, fu := range append(st.FlavorsReservation, st.FlavorsUsage...) {
			for _, r := range fu.Resources {
				if !r.Total.IsZero() {
					t.Errorf("ClusterQueue %s: %s %s of flavor %s still in use at the end", cq.Name, r.Total.String(), r.Name, fu.Name)
				}
			}
		}
	}
}

// problems describes what the replicas and the observer found, for a
// failure message.
func (h *harness) problems() string {
	starts, exits, problems := h.rs.report()
	_, seen := h.obs.report()
	var b strings.Builder
	fmt.Fprintf(&b, "replica starts: %d; logs: %s ...\n", starts, replicaLog(0))
	for _, s := range [][]string{exits, problems, seen} {
		for _, l := range s {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	return b.String()
}

// describeReservations lists the workloads holding quota, for failures.
func describeReservations() string {
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, wl := range list.Items {
		if wl.Status.Admission == nil || meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		fmt.Fprintf(&b, "%s cq=%s usage=%v evicted=%v conds=", wl.Name, wl.Status.Admission.ClusterQueue,
			wl.Status.Admission.PodSetAssignments[0].ResourceUsage.Cpu().String(), meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted))
		for _, c := range wl.Status.Conditions {
			fmt.Fprintf(&b, "%s=%s(%s,%s) ", c.Type, c.Status, c.Reason, c.LastTransitionTime.Format("15:04:05"))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// describeUnfinished lists the workloads not finished, for failures.
func describeUnfinished() string {
	var list kueue.WorkloadList
	if err := env.Client.List(context.Background(), &list); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, wl := range list.Items {
		if meta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished) {
			continue
		}
		fmt.Fprintf(&b, "%s queue=%s admission=%v conds=", wl.Name, wl.Spec.QueueName, wl.Status.Admission != nil)
		for _, c := range wl.Status.Conditions {
			fmt.Fprintf(&b, "%s=%s(%s: %s) ", c.Type, c.Status, c.Reason, c.Message)
		}
		b.WriteString("\n")
	}
	return b.String()
}
