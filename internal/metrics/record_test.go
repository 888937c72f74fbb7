package metrics

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// matching returns the series of family name whose labels include the
// label/value pairs kv.
func matching(t *testing.T, g prometheus.Gatherer, name string, kv ...string) []*dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, kv) {
				out = append(out, m)
			}
		}
	}
	return out
}

func hasLabels(m *dto.Metric, kv []string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == kv[i] && lp.GetValue() == kv[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// value returns the value of the one matching series: counter or gauge
// value, or the sample count of a histogram.
func value(t *testing.T, g prometheus.Gatherer, name string, kv ...string) float64 {
	t.Helper()
	ms := matching(t, g, name, kv...)
	if len(ms) != 1 {
		t.Fatalf("%s%v: %d matching series, want 1", name, kv, len(ms))
	}
	m := ms[0]
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("%s: unexpected metric kind", name)
	return 0
}

func count(t *testing.T, g prometheus.Gatherer, name string, kv ...string) int {
	t.Helper()
	return len(matching(t, g, name, kv...))
}

// seriesWith counts the series of all families carrying label=val.
func seriesWith(t *testing.T, g prometheus.Gatherer, label, val string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if hasLabels(m, []string{label, val}) {
				n++
			}
		}
	}
	return n
}

func TestAdmissionEvents(t *testing.T) {
	reg := newRegistry(t)
	lq := LocalQueue{Namespace: "team", Name: "main"}
	wl := Workload{ClusterQueue: "cq", LocalQueue: lq, PriorityClass: "high", Cohorts: []string{"co", "root"}}
	AdmissionAttempt(AdmissionSuccess, 20*time.Millisecond)
	AdmissionAttempt(AdmissionInadmissible, 10*time.Millisecond)
	AdmissionAttempt(AdmissionInadmissible, 10*time.Millisecond)
	QuotaReserved(wl, 3*time.Second)
	Admitted(wl, 4*time.Second)
	Admitted(wl, 6*time.Second)

	checks := []struct {
		name string
		kv   []string
		want float64
	}{
		{"kueue_admission_attempts_total", []string{"result", "success", "replica_role", "standalone"}, 1},
		{"kueue_admission_attempts_total", []string{"result", "inadmissible"}, 2},
		{"kueue_admission_attempt_duration_seconds", []string{"result", "inadmissible"}, 2},
		{"kueue_quota_reserved_workloads_total", []string{"cluster_queue", "cq", "priority_class", "high"}, 1},
		{"kueue_quota_reserved_wait_time_seconds", []string{"cluster_queue", "cq"}, 1},
		{"kueue_local_queue_quota_reserved_workloads_total", []string{"name", "main", "namespace", "team"}, 1},
		{"kueue_local_queue_quota_reserved_wait_time_seconds", []string{"name", "main"}, 1},
		{"kueue_admitted_workloads_total", []string{"cluster_queue", "cq", "priority_class", "high"}, 2},
		{"kueue_admission_wait_time_seconds", []string{"cluster_queue", "cq"}, 2},
		{"kueue_local_queue_admitted_workloads_total", []string{"name", "main", "namespace", "team"}, 2},
		{"kueue_local_queue_admission_wait_time_seconds", []string{"name", "main"}, 2},
		{"kueue_cohort_subtree_admitted_workloads_total", []string{"cohort", "co", "priority_class", "high"}, 2},
		{"kueue_cohort_subtree_admitted_workloads_total", []string{"cohort", "root"}, 2},
	}
	for _, c := range checks {
		if got := value(t, reg, c.name, c.kv...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.kv, got, c.want)
		}
	}
	h := matching(t, reg, "kueue_admission_wait_time_seconds")[0].GetHistogram()
	if h.GetSampleSum() != 10 {
		t.Errorf("admission wait sum = %v, want 10", h.GetSampleSum())
	}
}

func TestZeroLocalQueueSkipsLocalQueueSeries(t *testing.T) {
	reg := newRegistry(t)
	wl := Workload{ClusterQueue: "cq"}
	QuotaReserved(wl, time.Second)
	Admitted(wl, time.Second)
	Evicted(wl, Eviction{Reason: "Preempted"})
	Finished(wl, time.Second)
	ReportLocalQueuePendingWorkloads(LocalQueue{}, 1, 1)
	ReportLocalQueueStatus(LocalQueue{}, "True")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "kueue_local_queue_") {
			t.Errorf("%s exported for a zero LocalQueue", mf.GetName())
		}
	}
	if v := value(t, reg, "kueue_admitted_workloads_total", "priority_class", ""); v != 1 {
		t.Errorf("admitted = %v, want 1", v)
	}
}

func TestEvictedCountsUniqueEvictionsOnce(t *testing.T) {
	reg := newRegistry(t)
	lq := LocalQueue{Namespace: "team", Name: "main"}
	wl := Workload{ClusterQueue: "cq", LocalQueue: lq, PriorityClass: "low"}
	// One workload evicted twice for the same reason, then once for a new cause.
	Evicted(wl, Eviction{Reason: "PodsReadyTimeout", UnderlyingCause: "WaitForStart", FirstForWorkload: true})
	Evicted(wl, Eviction{Reason: "PodsReadyTimeout", UnderlyingCause: "WaitForStart",
		PodsWereReady: true, PodsReadyFor: 30 * time.Second})
	Evicted(wl, Eviction{Reason: "PodsReadyTimeout", UnderlyingCause: "WaitForRecovery", FirstForWorkload: true})

	start := []string{"reason", "PodsReadyTimeout", "underlying_cause", "WaitForStart", "priority_class", "low"}
	if v := value(t, reg, "kueue_evicted_workloads_total", start...); v != 2 {
		t.Errorf("evicted total = %v, want 2", v)
	}
	if v := value(t, reg, "kueue_evicted_workloads_once_total", start...); v != 1 {
		t.Errorf("evicted once = %v, want 1", v)
	}
	if v := value(t, reg, "kueue_evicted_workloads_once_total", "underlying_cause", "WaitForRecovery"); v != 1 {
		t.Errorf("evicted once (recovery) = %v, want 1", v)
	}
	if v := value(t, reg, "kueue_local_queue_evicted_workloads_total", start[:4]...); v != 2 {
		t.Errorf("local queue evicted = %v, want 2", v)
	}
	if n := count(t, reg, "kueue_pods_ready_to_evicted_time_seconds"); n != 1 {
		t.Fatalf("pods ready to evicted: %d series, want 1 (only the eviction with ready pods)", n)
	}
	if v := value(t, reg, "kueue_pods_ready_to_evicted_time_seconds", start[:4]...); v != 1 {
		t.Errorf("pods ready to evicted samples = %v, want 1", v)
	}
	EvictionCompleted("cq", "PodsReadyTimeout", 5*time.Second)
	if v := value(t, reg, "kueue_workload_eviction_latency_seconds", "reason", "PodsReadyTimeout"); v != 1 {
		t.Errorf("eviction latency samples = %v, want 1", v)
	}
	Preempted("cq", "InCohortReclamation")
	if v := value(t, reg, "kueue_preempted_workloads_total", "preempting_cluster_queue", "cq", "reason", "InCohortReclamation"); v != 1 {
		t.Errorf("preempted = %v, want 1", v)
	}
}

func TestFinishedWithoutExecution(t *testing.T) {
	reg := newRegistry(t)
	wl := Workload{ClusterQueue: "cq", LocalQueue: LocalQueue{Namespace: "a", Name: "b"}}
	Finished(wl, -1)
	Finished(wl, 90*time.Second)
	if v := value(t, reg, "kueue_finished_workloads_total"); v != 2 {
		t.Errorf("finished total = %v, want 2", v)
	}
	if v := value(t, reg, "kueue_execution_time_seconds"); v != 1 {
		t.Errorf("execution time samples = %v, want 1", v)
	}
	if v := value(t, reg, "kueue_local_queue_execution_time_seconds"); v != 1 {
		t.Errorf("local queue execution time samples = %v, want 1", v)
	}
}

func TestClusterQueueStatusIsOneHot(t *testing.T) {
	reg := newRegistry(t)
	ReportClusterQueueStatus("cq", CQStatusPending)
	ReportClusterQueueStatus("cq", CQStatusActive)
	const want = `
# HELP kueue_cluster_queue_status 1 for the current status of the ClusterQueue ('pending', 'active' or 'terminating'), 0 for the others.
# TYPE kueue_cluster_queue_status gauge
kueue_cluster_queue_status{cluster_queue="cq",replica_role="standalone",status="active"} 1
kueue_cluster_queue_status{cluster_queue="cq",replica_role="standalone",status="pending"} 0
kueue_cluster_queue_status{cluster_queue="cq",replica_role="standalone",status="terminating"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kueue_cluster_queue_status"); err != nil {
		t.Error(err)
	}
	ReportClusterQueueStatus("cq", "terminated")
	if v := value(t, reg, "kueue_cluster_queue_status", "status", CQStatusTerminating); v != 1 {
		t.Errorf("terminating = %v, want 1", v)
	}
	ReportLocalQueueStatus(LocalQueue{Namespace: "n", Name: "q"}, "False")
	for s, want := range map[string]float64{"True": 0, "False": 1, "Unknown": 0} {
		if v := value(t, reg, "kueue_local_queue_status", "active", s); v != want {
			t.Errorf("local queue status %s = %v, want %v", s, v, want)
		}
	}
}

func TestWeightedShareInfinityIsNaN(t *testing.T) {
	reg := newRegistry(t)
	ReportClusterQueueWeightedShare("a", "co", math.Inf(1))
	ReportClusterQueueWeightedShare("b", "co", float64(math.MaxInt64))
	ReportClusterQueueWeightedShare("c", "co", 250)
	ReportCohortWeightedShare("co", math.Inf(1))
	for _, cq := range []string{"a", "b"} {
		if v := value(t, reg, "kueue_cluster_queue_weighted_share", "cluster_queue", cq); !math.IsNaN(v) {
			t.Errorf("share of %s = %v, want NaN", cq, v)
		}
	}
	if v := value(t, reg, "kueue_cluster_queue_weighted_share", "cluster_queue", "c", "cohort", "co"); v != 250 {
		t.Errorf("share of c = %v, want 250", v)
	}
	if v := value(t, reg, "kueue_cohort_weighted_share", "cohort", "co"); !math.IsNaN(v) {
		t.Errorf("cohort share = %v, want NaN", v)
	}
}

func TestQueueGauges(t *testing.T) {
	reg := newRegistry(t)
	ReportPendingWorkloads("cq", 5, 2)
	ReportPendingWorkloads("cq", 4, 3)
	ReportReservingActiveWorkloads("cq", 7)
	ReportAdmittedActiveWorkloads("cq", 6)
	ReportClusterQueueQuota("co", "cq", "gpu", "nvidia.com/gpu", 8, math.Inf(1), 2)
	ReportClusterQueueUsage("co", "cq", "gpu", "nvidia.com/gpu", 6, 4)
	checks := []struct {
		name string
		kv   []string
		want float64
	}{
		{"kueue_pending_workloads", []string{"status", "active"}, 4},
		{"kueue_pending_workloads", []string{"status", "inadmissible"}, 3},
		{"kueue_reserving_active_workloads", nil, 7},
		{"kueue_admitted_active_workloads", nil, 6},
		{"kueue_cluster_queue_nominal_quota", []string{"cohort", "co", "flavor", "gpu", "resource", "nvidia.com/gpu"}, 8},
		{"kueue_cluster_queue_borrowing_limit", nil, math.Inf(1)},
		{"kueue_cluster_queue_lending_limit", nil, 2},
		{"kueue_cluster_queue_resource_reservation", nil, 6},
		{"kueue_cluster_queue_resource_usage", nil, 4},
	}
	for _, c := range checks {
		if got := value(t, reg, c.name, c.kv...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.kv, got, c.want)
		}
	}
}

func TestUnadmittedReportsReplace(t *testing.T) {
	reg := newRegistry(t)
	quota, pods := Unadmitted{Reason: "WaitingForQuota"}, Unadmitted{Reason: "WaitingForPodsReady"}
	lq := LocalQueue{Namespace: "n", Name: "q"}
	ReportUnadmittedWorkloads("cq", map[Unadmitted]int{quota: 1, pods: 2})
	ReportLocalQueueUnadmittedWorkloads(lq, "cq", map[Unadmitted]int{quota: 1, pods: 2})
	ReportUnadmittedWorkloads("cq", map[Unadmitted]int{quota: 3})
	ReportLocalQueueUnadmittedWorkloads(lq, "cq2", map[Unadmitted]int{quota: 3})
	if n := count(t, reg, "kueue_unadmitted_workloads"); n != 1 {
		t.Errorf("unadmitted: %d series, want 1", n)
	}
	if v := value(t, reg, "kueue_unadmitted_workloads", "reason", "WaitingForQuota", "underlying_cause", ""); v != 3 {
		t.Errorf("unadmitted = %v, want 3", v)
	}
	if n := count(t, reg, "kueue_local_queue_unadmitted_workloads"); n != 1 {
		t.Errorf("local queue unadmitted: %d series, want 1", n)
	}
	if v := value(t, reg, "kueue_local_queue_unadmitted_workloads", "cluster_queue", "cq2"); v != 3 {
		t.Errorf("local queue unadmitted = %v, want 3", v)
	}
	ReportUnadmittedWorkloads("cq", nil)
	if n := count(t, reg, "kueue_unadmitted_workloads"); n != 0 {
		t.Errorf("unadmitted after empty report: %d series, want 0", n)
	}
}

func TestInfoReportsReplace(t *testing.T) {
	reg := newRegistry(t)
	ReportClusterQueueInfo("cq", "a", "root")
	ReportClusterQueueInfo("cq", "b", "root")
	ReportCohortInfo("b", "root", "root")
	ReportCohortInfo("b", "other", "other")
	if n := count(t, reg, "kueue_cluster_queue_info"); n != 1 {
		t.Errorf("cluster queue info: %d series, want 1", n)
	}
	if v := value(t, reg, "kueue_cluster_queue_info", "parent_cohort", "b", "root_cohort", "root"); v != 1 {
		t.Errorf("cluster queue info = %v, want 1", v)
	}
	if v := value(t, reg, "kueue_cohort_info", "cohort", "b", "parent_cohort", "other"); v != 1 {
		t.Errorf("cohort info = %v, want 1", v)
	}
}
