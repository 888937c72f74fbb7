package metrics

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// specFamily is one row of SPEC section 6, copied by hand (not derived
// from the code) so that a typo on either side fails the test.
type specFamily struct {
	name    string
	typ     dto.MetricType
	labels  string // comma separated, in Kueue's order
	buckets string // histograms only: w14, w16, default, creation
}

const (
	counter   = dto.MetricType_COUNTER
	gauge     = dto.MetricType_GAUGE
	histogram = dto.MetricType_HISTOGRAM

	cqPC    = "cluster_queue,priority_class,replica_role"
	lqPC    = "name,namespace,priority_class,replica_role"
	cqFR    = "cohort,cluster_queue,flavor,resource,replica_role"
	evLabel = "cluster_queue,reason,underlying_cause,priority_class,replica_role"
)

var specFamilies = []specFamily{
	// 6.1 health / global
	{"kueue_build_info", gauge, "git_version,git_commit,build_date,go_version,compiler,platform", ""},
	{"kueue_admission_attempts_total", counter, "result,replica_role", ""},
	{"kueue_admission_attempt_duration_seconds", histogram, "result,replica_role", "default"},
	{"kueue_admission_cycle_preemption_skips", gauge, "cluster_queue,replica_role", ""},
	{"kueue_preemption_target_recomputations_total", counter, "cluster_queue,result,replica_role", ""},
	{"kueue_pod_scheduling_gate_removal_seconds", histogram, "name,cluster_queue,is_group,replica_role", "default"},
	{"kueue_workload_creation_latency_seconds", histogram, "job_kind,replica_role", "creation"},
	{"multikueue_workloads_dispatched_total", counter, "cluster_queue,cluster,replica_role", ""},
	{"multikueue_workloads_admitted_total", counter, "cluster_queue,cluster,replica_role", ""},
	// 6.2 ClusterQueue
	{"kueue_pending_workloads", gauge, "cluster_queue,status,replica_role", ""},
	{"kueue_pending_scheduling_hashes", gauge, "cluster_queue,status,replica_role", ""},
	{"kueue_unadmitted_workloads", gauge, "cluster_queue,reason,underlying_cause,replica_role", ""},
	{"kueue_quota_reserved_workloads_total", counter, cqPC, ""},
	{"kueue_quota_reserved_wait_time_seconds", histogram, cqPC, "w14"},
	{"kueue_admitted_workloads_total", counter, cqPC, ""},
	{"kueue_admission_wait_time_seconds", histogram, cqPC, "w16"},
	{"kueue_admission_checks_wait_time_seconds", histogram, cqPC, "w14"},
	{"kueue_ready_wait_time_seconds", histogram, cqPC, "w14"},
	{"kueue_admitted_until_ready_wait_time_seconds", histogram, cqPC, "w14"},
	{"kueue_reserving_active_workloads", gauge, "cluster_queue,replica_role", ""},
	{"kueue_admitted_active_workloads", gauge, "cluster_queue,replica_role", ""},
	{"kueue_finished_workloads", gauge, "cluster_queue,replica_role", ""},
	{"kueue_finished_workloads_total", counter, cqPC, ""},
	{"kueue_execution_time_seconds", histogram, cqPC, "w14"},
	{"kueue_evicted_workloads_total", counter, evLabel, ""},
	{"kueue_evicted_workloads_once_total", counter, evLabel, ""},
	{"kueue_pods_ready_to_evicted_time_seconds", histogram, "cluster_queue,reason,underlying_cause,replica_role", "w14"},
	{"kueue_workload_eviction_latency_seconds", histogram, "cluster_queue,reason,replica_role", "w14"},
	{"kueue_preempted_workloads_total", counter, "preempting_cluster_queue,reason,replica_role", ""},
	{"kueue_cluster_queue_status", gauge, "cluster_queue,status,replica_role", ""},
	{"kueue_cluster_queue_resource_pending", gauge, "cluster_queue,resource,replica_role", ""},
	{"kueue_cluster_queue_info", gauge, "cluster_queue,parent_cohort,root_cohort,replica_role", ""},
	{"kueue_cluster_queue_resource_reservation", gauge, cqFR, ""},
	{"kueue_cluster_queue_resource_usage", gauge, cqFR, ""},
	{"kueue_cluster_queue_nominal_quota", gauge, cqFR, ""},
	{"kueue_cluster_queue_borrowing_limit", gauge, cqFR, ""},
	{"kueue_cluster_queue_lending_limit", gauge, cqFR, ""},
	{"kueue_cluster_queue_weighted_share", gauge, "cluster_queue,cohort,replica_role", ""},
	// 6.3 LocalQueue
	{"kueue_local_queue_pending_workloads", gauge, "name,namespace,status,replica_role", ""},
	{"kueue_local_queue_unadmitted_workloads", gauge, "name,namespace,cluster_queue,reason,underlying_cause,replica_role", ""},
	{"kueue_local_queue_quota_reserved_workloads_total", counter, lqPC, ""},
	{"kueue_local_queue_quota_reserved_wait_time_seconds", histogram, lqPC, "w14"},
	{"kueue_local_queue_admitted_workloads_total", counter, lqPC, ""},
	{"kueue_local_queue_admission_wait_time_seconds", histogram, lqPC, "w14"},
	{"kueue_local_queue_admission_checks_wait_time_seconds", histogram, lqPC, "w14"},
	{"kueue_local_queue_ready_wait_time_seconds", histogram, lqPC, "w14"},
	{"kueue_local_queue_admitted_until_ready_wait_time_seconds", histogram, lqPC, "w14"},
	{"kueue_local_queue_reserving_active_workloads", gauge, "name,namespace,replica_role", ""},
	{"kueue_local_queue_admitted_active_workloads", gauge, "name,namespace,replica_role", ""},
	{"kueue_local_queue_finished_workloads", gauge, "name,namespace,replica_role", ""},
	{"kueue_local_queue_finished_workloads_total", counter, lqPC, ""},
	{"kueue_local_queue_execution_time_seconds", histogram, lqPC, "w14"},
	{"kueue_local_queue_evicted_workloads_total", counter, "name,namespace,reason,underlying_cause,priority_class,replica_role", ""},
	{"kueue_local_queue_status", gauge, "name,namespace,active,replica_role", ""},
	{"kueue_local_queue_resource_reservation", gauge, "name,namespace,flavor,resource,replica_role", ""},
	{"kueue_local_queue_resource_usage", gauge, "name,namespace,flavor,resource,replica_role", ""},
	{"kueue_local_queue_admission_fair_sharing_usage", gauge, "name,namespace,cluster_queue,replica_role", ""},
	// 6.4 Cohort
	{"kueue_cohort_info", gauge, "cohort,parent_cohort,root_cohort,replica_role", ""},
	{"kueue_cohort_weighted_share", gauge, "cohort,replica_role", ""},
	{"kueue_cohort_subtree_quota", gauge, "cohort,flavor,resource,replica_role", ""},
	{"kueue_cohort_subtree_resource_reservations", gauge, "cohort,flavor,resource,replica_role", ""},
	{"kueue_cohort_subtree_admitted_workloads_total", counter, "cohort,priority_class,replica_role", ""},
	{"kueue_cohort_subtree_admitted_active_workloads", gauge, "cohort,replica_role", ""},
}

// notExported is defined by Kueue but never registered.
const notExported = "kueue_replaced_workload_slices_total"

var specBuckets = map[string][]float64{
	"w14":      {1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240},
	"w16":      {1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 40960},
	"default":  {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	"creation": {0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24},
}

// capture is a registry that also remembers what was registered.
type capture struct {
	*prometheus.Registry
	registered []prometheus.Collector
}

func (c *capture) Register(col prometheus.Collector) error {
	c.registered = append(c.registered, col)
	return c.Registry.Register(col)
}

func (c *capture) MustRegister(cols ...prometheus.Collector) {
	for _, col := range cols {
		if err := c.Register(col); err != nil {
			panic(err)
		}
	}
}

// newRegistry registers a fresh set of metrics on a new registry and
// resets the role, so every test starts from nothing.
func newRegistry(t *testing.T) *capture {
	t.Helper()
	SetReplicaRole(RoleStandalone)
	reg := &capture{Registry: prometheus.NewRegistry()}
	if err := Register(reg); err != nil {
		t.Fatalf("Register: %v", err)
	}
	return reg
}

var descRE = regexp.MustCompile(`fqName: "([^"]*)".*variableLabels: \{([^}]*)\}`)

// describe returns the metric name and ordered label names of col.
func describe(t *testing.T, col prometheus.Collector) (string, string) {
	t.Helper()
	ch := make(chan *prometheus.Desc, 1)
	col.Describe(ch)
	m := descRE.FindStringSubmatch((<-ch).String())
	if m == nil {
		t.Fatalf("cannot parse desc of %T", col)
	}
	return m[1], m[2]
}

func typeOf(col prometheus.Collector) dto.MetricType {
	switch col.(type) {
	case *prometheus.CounterVec:
		return counter
	case *prometheus.GaugeVec:
		return gauge
	case *prometheus.HistogramVec:
		return histogram
	}
	return dto.MetricType_UNTYPED
}

func TestRegisteredFamiliesMatchSpec(t *testing.T) {
	reg := newRegistry(t)
	got := map[string]int{}
	for _, col := range reg.registered {
		name, labels := describe(t, col)
		got[name]++
		i := slices.IndexFunc(specFamilies, func(f specFamily) bool { return f.name == name })
		if i < 0 {
			t.Errorf("registered %s, which SPEC does not list (or must not be exported)", name)
			continue
		}
		want := specFamilies[i]
		if typ := typeOf(col); typ != want.typ {
			t.Errorf("%s: type %v, want %v", name, typ, want.typ)
		}
		if labels != want.labels {
			t.Errorf("%s: labels %q, want %q", name, labels, want.labels)
		}
	}
	for _, f := range specFamilies {
		if got[f.name] != 1 {
			t.Errorf("%s registered %d times, want once", f.name, got[f.name])
		}
	}
	if len(specFamilies) != 63 {
		t.Errorf("spec table has %d rows, SPEC counts 63 exported families", len(specFamilies))
	}
	if got[notExported] != 0 {
		t.Errorf("%s must not be registered", notExported)
	}
}

func TestUnexportedFamilyIsDefined(t *testing.T) {
	c := newCollectors()
	i := slices.IndexFunc(c.families, func(f *family) bool { return f.name == notExported })
	if i < 0 || !c.families[i].unexported || strings.Join(c.families[i].labels, ",") != "cluster_queue,replica_role" {
		t.Fatalf("%s should be defined, unexported, with labels cluster_queue,replica_role", notExported)
	}
	if len(c.families) != 64 {
		t.Errorf("defined %d families, SPEC counts 64", len(c.families))
	}
}

// recordEverything calls every recording function once.
func recordEverything() {
	lq := LocalQueue{Namespace: "ns", Name: "lq"}
	wl := Workload{ClusterQueue: "cq", LocalQueue: lq, PriorityClass: "high", Cohorts: []string{"co", "root"}}
	AdmissionAttempt(AdmissionSuccess, 30*time.Millisecond)
	ReportPreemptionSkips("cq", 1)
	PreemptionTargetsRecomputed("cq", RecomputeSkipped)
	SchedulingGateRemoved(GateAdmission, "cq", false, time.Second)
	WorkloadCreated("Job", 50*time.Millisecond)
	MultiKueueDispatched("cq", "worker1")
	MultiKueueAdmitted("cq", "worker1")
	QuotaReserved(wl, 3*time.Second)
	Admitted(wl, 4*time.Second)
	AdmissionChecksPassed(wl, time.Second)
	PodsReady(wl, 10*time.Second, 6*time.Second)
	Finished(wl, time.Minute)
	Evicted(wl, Eviction{Reason: "Preempted", FirstForWorkload: true, PodsWereReady: true, PodsReadyFor: time.Minute})
	EvictionCompleted("cq", "Preempted", 2*time.Second)
	Preempted("cq", "InClusterQueue")
	WorkloadSliceReplaced("cq")
	reportEveryQueue(lq)
}

func reportEveryQueue(lq LocalQueue) {
	ReportPendingWorkloads("cq", 2, 1)
	ReportPendingSchedulingHashes("cq", 1, 1)
	ReportUnadmittedWorkloads("cq", map[Unadmitted]int{{Reason: "WaitingForQuota"}: 3})
	ReportReservingActiveWorkloads("cq", 4)
	ReportAdmittedActiveWorkloads("cq", 3)
	ReportFinishedWorkloads("cq", 1)
	ReportClusterQueueStatus("cq", CQStatusActive)
	ReportClusterQueueResourcePending("cq", "cpu", 2)
	ReportClusterQueueInfo("cq", "co", "root")
	ReportClusterQueueQuota("co", "cq", "default", "cpu", 10, math.Inf(1), math.Inf(1))
	ReportClusterQueueUsage("co", "cq", "default", "cpu", 4, 3)
	ReportClusterQueueWeightedShare("cq", "co", 250)
	ReportLocalQueuePendingWorkloads(lq, 2, 1)
	ReportLocalQueueUnadmittedWorkloads(lq, "cq", map[Unadmitted]int{{Reason: "WaitingForQuota"}: 3})
	ReportLocalQueueReservingActiveWorkloads(lq, 4)
	ReportLocalQueueAdmittedActiveWorkloads(lq, 3)
	ReportLocalQueueFinishedWorkloads(lq, 1)
	ReportLocalQueueStatus(lq, "True")
	ReportLocalQueueUsage(lq, "default", "cpu", 4, 3)
	ReportLocalQueueFairSharingUsage(lq, "cq", 0.5)
	ReportCohortInfo("co", "root", "root")
	ReportCohortWeightedShare("co", 0)
	ReportCohortSubtreeQuota("co", "default", "cpu", 10)
	ReportCohortSubtreeReservations("co", "default", "cpu", 4)
	ReportCohortSubtreeAdmittedActiveWorkloads("co", 3)
}

func TestExportedFamiliesTypesLabelsAndBuckets(t *testing.T) {
	reg := newRegistry(t)
	recordEverything()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		byName[mf.GetName()] = mf
	}
	for _, f := range specFamilies {
		mf := byName[f.name]
		if mf == nil {
			t.Errorf("%s: not exported after recording everything", f.name)
			continue
		}
		if mf.GetType() != f.typ {
			t.Errorf("%s: exported type %v, want %v", f.name, mf.GetType(), f.typ)
		}
		m := mf.GetMetric()[0]
		if got, want := labelNames(m), sortedCSV(f.labels); got != want {
			t.Errorf("%s: exported labels %q, want %q", f.name, got, want)
		}
		if f.typ == histogram {
			var bounds []float64
			for _, b := range m.GetHistogram().GetBucket() {
				bounds = append(bounds, b.GetUpperBound())
			}
			if !floatsEqual(bounds, specBuckets[f.buckets]) {
				t.Errorf("%s: buckets %v, want %s %v", f.name, bounds, f.buckets, specBuckets[f.buckets])
			}
		}
	}
	if len(byName) != len(specFamilies) {
		t.Errorf("exported %d families, want %d", len(byName), len(specFamilies))
	}
}

func labelNames(m *dto.Metric) string {
	var names []string
	for _, lp := range m.GetLabel() {
		names = append(names, lp.GetName())
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

func sortedCSV(s string) string {
	parts := strings.Split(s, ",")
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestRegisterTwiceOnOneRegistryFails(t *testing.T) {
	reg := newRegistry(t)
	if err := Register(reg); err == nil {
		t.Fatal("second Register on the same registry succeeded")
	}
	// The first set is still current and still exported.
	AdmissionAttempt(AdmissionSuccess, time.Millisecond)
	if v := value(t, reg, "kueue_admission_attempts_total", "result", "success"); v != 1 {
		t.Fatalf("admission attempts = %v, want 1", v)
	}
}

func TestRegisterNil(t *testing.T) {
	if err := Register(nil); err == nil {
		t.Fatal("Register(nil) succeeded")
	}
}

func TestBuildInfo(t *testing.T) {
	reg := newRegistry(t)
	SetBuildInfo("v1.2.3", "abc", "2026-01-01")
	if v := value(t, reg, "kueue_build_info", "git_version", "v1.2.3", "git_commit", "abc", "build_date", "2026-01-01"); v != 1 {
		t.Fatalf("build info = %v, want 1", v)
	}
	if n := count(t, reg, "kueue_build_info"); n != 1 {
		t.Fatalf("build info has %d series, want 1", n)
	}
}
