package manager

import (
	"context"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// metricValue returns the value of the series of family name whose labels
// include want, or false when there is none. Counters, gauges and the
// sample count of histograms are read.
func metricValue(t *testing.T, name string, want map[string]string) (float64, bool) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gathering metrics: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, want) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			found++
		}
	}
	return found == len(want)
}

// waitMetric waits until the series has value v.
func waitMetric(t *testing.T, name string, labels map[string]string, v float64) {
	t.Helper()
	eventually(t, 45*time.Second, fmt.Sprintf("%s%v = %v", name, labels, v), func() error {
		got, ok := metricValue(t, name, labels)
		if !ok {
			return fmt.Errorf("no series")
		}
		if got != v {
			return fmt.Errorf("value %v", got)
		}
		return nil
	})
}

// The manager exports Kueue's metric names: admissions, pending counts,
// queue status, quota and usage, and drops a ClusterQueue's series when it
// is deleted.
func TestMetricsFollowAdmissions(t *testing.T) {
	startManager(t, func(c *configapi.Configuration) {
		c.Metrics.EnableClusterQueueResources = true
		c.Metrics.LocalQueueMetrics = &configapi.LocalQueueMetrics{Enable: true}
	})
	ns, cq, fl := singleQueue(t, "2")
	create(t, newWorkload(ns, "first", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "first", cq)
	create(t, newWorkload(ns, "second", "lq", 2, "1", 0))
	waitPending(t, ns, "second", kueue.WorkloadReasonWaitingForQuota)

	byCQ := map[string]string{"cluster_queue": cq}
	waitMetric(t, "kueue_quota_reserved_workloads_total", byCQ, 1)
	waitMetric(t, "kueue_admitted_workloads_total", byCQ, 1)
	waitMetric(t, "kueue_admission_wait_time_seconds", byCQ, 1)
	waitMetric(t, "kueue_pending_workloads", map[string]string{"cluster_queue": cq, "status": "inadmissible"}, 1)
	waitMetric(t, "kueue_pending_workloads", map[string]string{"cluster_queue": cq, "status": "active"}, 0)
	waitMetric(t, "kueue_reserving_active_workloads", byCQ, 1)
	waitMetric(t, "kueue_admitted_active_workloads", byCQ, 1)
	waitMetric(t, "kueue_cluster_queue_status", map[string]string{"cluster_queue": cq, "status": "active"}, 1)
	waitMetric(t, "kueue_cluster_queue_status", map[string]string{"cluster_queue": cq, "status": "pending"}, 0)
	frLabels := map[string]string{"cluster_queue": cq, "flavor": fl, "resource": "cpu"}
	waitMetric(t, "kueue_cluster_queue_nominal_quota", frLabels, 2)
	waitMetric(t, "kueue_cluster_queue_resource_reservation", frLabels, 2)
	waitMetric(t, "kueue_local_queue_admitted_active_workloads", map[string]string{"name": "lq", "namespace": ns}, 1)
	waitMetric(t, "kueue_local_queue_admitted_workloads_total", map[string]string{"name": "lq", "namespace": ns}, 1)
	if v, ok := metricValue(t, "kueue_cluster_queue_borrowing_limit", frLabels); !ok || v < 1e300 {
		t.Errorf("an unset borrowing limit must be reported as +Inf, got %v (found %v)", v, ok)
	}

	finish(t, ns, "first")
	waitAdmitted(t, ns, "second", cq)
	waitMetric(t, "kueue_finished_workloads_total", byCQ, 1)
	waitMetric(t, "kueue_admitted_workloads_total", byCQ, 2)
	waitMetric(t, "kueue_pending_workloads", map[string]string{"cluster_queue": cq, "status": "inadmissible"}, 0)

	ctx := context.Background()
	for _, name := range []string{"first", "second"} {
		if err := env.Client.Delete(ctx, &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.Client.Delete(ctx, &kueue.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: cq}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 45*time.Second, "the deleted ClusterQueue's gauges are gone", func() error {
		if _, ok := metricValue(t, "kueue_cluster_queue_status", byCQ); ok {
			return fmt.Errorf("kueue_cluster_queue_status still reported")
		}
		if _, ok := metricValue(t, "kueue_admitted_workloads_total", byCQ); ok {
			return fmt.Errorf("kueue_admitted_workloads_total still reported")
		}
		return nil
	})
}

// A preemption counts the preempting queue's preemption and the victim's
// eviction.
func TestMetricsCountPreemptions(t *testing.T) {
	startManager(t)
	ns := namespace(t)
	cq, fl := scoped(ns, "cq"), scoped(ns, "f")
	create(t, flavor(fl, nil), clusterQueue(cq, "", fl, "2", preemption(kueue.PreemptionPolicyLowerPriority, kueue.PreemptionPolicyNever)),
		localQueue(ns, "lq", cq))
	create(t, newWorkload(ns, "low", "lq", 2, "1", 0))
	waitAdmitted(t, ns, "low", cq)
	create(t, newWorkload(ns, "high", "lq", 2, "1", 10))
	waitAdmitted(t, ns, "high", cq)
	waitMetric(t, "kueue_preempted_workloads_total", map[string]string{"preempting_cluster_queue": cq, "reason": kueue.InClusterQueueReason}, 1)
	waitMetric(t, "kueue_evicted_workloads_total", map[string]string{"cluster_queue": cq, "reason": kueue.WorkloadEvictedByPreemption}, 1)
	waitMetric(t, "kueue_evicted_workloads_once_total", map[string]string{"cluster_queue": cq, "reason": kueue.WorkloadEvictedByPreemption}, 1)
}
