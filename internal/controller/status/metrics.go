package status

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/resources"
)

// MetricsOptions choose which gauges the reporter publishes.
type MetricsOptions struct {
	// Enabled turns the queue gauges on.
	Enabled bool
	// ClusterQueueResources adds per flavor and resource quota and usage.
	ClusterQueueResources bool
	// LocalQueues adds the kueue_local_queue_* gauges for the LocalQueues
	// LocalQueueSelector matches (every LocalQueue when it is nil).
	LocalQueues        bool
	LocalQueueSelector labels.Selector
}

// published remembers what the last report covered, so that series of
// deleted objects are removed.
type published struct {
	queues  map[string]bool
	locals  map[metrics.LocalQueue]bool
	cohorts map[string]bool
	// layout is, per ClusterQueue, its cohort and flavor-resources as last
	// reported; a change clears its resource series first.
	layout map[string]string
}

// reportMetrics publishes the gauges of every queue and cohort and clears
// those of objects that are gone.
func (r *Reporter) reportMetrics(st *Statuses, cqs []kueue.ClusterQueue, lqs []kueue.LocalQueue) {
	if !r.Metrics.Enabled {
		return
	}
	prev := r.published
	next := published{queues: map[string]bool{}, locals: map[metrics.LocalQueue]bool{}, cohorts: map[string]bool{}, layout: map[string]string{}}
	for i := range cqs {
		name := cqs[i].Name
		next.queues[name] = true
		r.reportClusterQueue(st, &cqs[i], prev.layout, next.layout)
	}
	if r.Metrics.LocalQueues {
		for i := range lqs {
			lq := &lqs[i]
			if sel := r.Metrics.LocalQueueSelector; sel != nil && !sel.Matches(labels.Set(lq.Labels)) {
				continue
			}
			key := metrics.LocalQueue{Namespace: lq.Namespace, Name: lq.Name}
			next.locals[key] = true
			reportLocalQueue(st, lq, key)
		}
	}
	for name, cf := range st.Cohorts {
		next.cohorts[string(name)] = true
		metrics.ReportCohortInfo(string(name), string(cf.Parent), string(cf.Root))
		metrics.ReportCohortSubtreeAdmittedActiveWorkloads(string(name), int(cf.Admitted))
		if r.FairSharing {
			metrics.ReportCohortWeightedShare(string(name), shareFloat(st.Shares.Cohorts[name]))
		}
	}
	for name := range prev.queues {
		if !next.queues[name] {
			metrics.ClearClusterQueue(name)
		}
	}
	for key := range prev.locals {
		if !next.locals[key] {
			metrics.ClearLocalQueue(key)
		}
	}
	for name := range prev.cohorts {
		if !next.cohorts[name] {
			metrics.ClearCohort(name)
		}
	}
	r.published = next
}

func (r *Reporter) reportClusterQueue(st *Statuses, obj *kueue.ClusterQueue, before, after map[string]string) {
	name := obj.Name
	f := st.Queues[kueue.ClusterQueueReference(name)]
	if f == nil {
		f = &QueueFigures{}
	}
	metrics.ReportPendingWorkloads(name, f.Waiting.Active, f.Waiting.Inadmissible)
	metrics.ReportPendingSchedulingHashes(name, f.Waiting.ActiveShapes, f.Waiting.InadmissibleShapes)
	metrics.ReportReservingActiveWorkloads(name, int(f.Reserving))
	metrics.ReportAdmittedActiveWorkloads(name, int(f.Admitted))
	metrics.ReportClusterQueueStatus(name, queueStatus(obj))
	metrics.ReportClusterQueueInfo(name, string(f.Cohort), string(f.RootCohort))
	cohort := string(f.Cohort)
	if r.FairSharing {
		metrics.ReportClusterQueueWeightedShare(name, cohort, shareFloat(st.Shares.ClusterQueues[kueue.ClusterQueueReference(name)]))
	}
	if !r.Metrics.ClusterQueueResources {
		return
	}
	layout := cohort
	for _, g := range obj.Spec.ResourceGroups {
		for _, fq := range g.Flavors {
			for _, res := range fq.Resources {
				layout += "|" + string(fq.Name) + "/" + string(res.Name)
			}
		}
	}
	if old, ok := before[name]; ok && old != layout {
		metrics.ClearClusterQueueResources(name)
		if r.FairSharing {
			metrics.ReportClusterQueueWeightedShare(name, cohort, shareFloat(st.Shares.ClusterQueues[kueue.ClusterQueueReference(name)]))
		}
	}
	after[name] = layout
	for _, g := range obj.Spec.ResourceGroups {
		for _, fq := range g.Flavors {
			for _, res := range fq.Resources {
				fr := resources.FlavorResource{Flavor: fq.Name, Resource: res.Name}
				metrics.ReportClusterQueueQuota(cohort, name, string(fq.Name), string(res.Name),
					res.NominalQuota.AsApproximateFloat64(), limit(res.BorrowingLimit), limit(res.LendingLimit))
				metrics.ReportClusterQueueUsage(cohort, name, string(fq.Name), string(res.Name),
					amount(res.Name, f.Reserved[fr]), amount(res.Name, f.Used[fr]))
			}
		}
	}
}

// queueStatus is the kueue_cluster_queue_status value of a ClusterQueue.
func queueStatus(obj *kueue.ClusterQueue) string {
	switch {
	case !obj.DeletionTimestamp.IsZero():
		return metrics.CQStatusTerminating
	case meta.IsStatusConditionTrue(obj.Status.Conditions, kueue.ClusterQueueActive):
		return metrics.CQStatusActive
	}
	return metrics.CQStatusPending
}

func reportLocalQueue(st *Statuses, lq *kueue.LocalQueue, key metrics.LocalQueue) {
	f := st.Locals[queueing.LocalQueueKey{Namespace: lq.Namespace, Name: kueue.LocalQueueName(lq.Name)}]
	if f == nil {
		f = &LocalFigures{}
	}
	// The split of a LocalQueue's pending workloads is not tracked; they
	// count as active.
	metrics.ReportLocalQueuePendingWorkloads(key, int(f.Pending), 0)
	metrics.ReportLocalQueueReservingActiveWorkloads(key, int(f.Reserving))
	metrics.ReportLocalQueueAdmittedActiveWorkloads(key, int(f.Admitted))
	active := "Unknown"
	if c := meta.FindStatusCondition(lq.Status.Conditions, kueue.LocalQueueActive); c != nil {
		active = string(c.Status)
	}
	metrics.ReportLocalQueueStatus(key, active)
	if fs, ok := st.Fair[queueing.LocalQueueKey{Namespace: lq.Namespace, Name: kueue.LocalQueueName(lq.Name)}]; ok {
		metrics.ReportLocalQueueFairSharingUsage(key, string(fs.ClusterQueue), fs.Usage)
	}
	for _, fr := range f.Reserved.Keys() {
		metrics.ReportLocalQueueUsage(key, string(fr.Flavor), string(fr.Resource),
			amount(fr.Resource, f.Reserved[fr]), amount(fr.Resource, f.Used[fr]))
	}
}

// shareFloat turns a published share (MaxInt64 for infinite) into a float.
func shareFloat(share int64) float64 {
	if share == math.MaxInt64 {
		return math.Inf(1)
	}
	return float64(share)
}

// amount converts an internal amount to the resource's natural unit.
func amount(r corev1.ResourceName, a resources.Amount) float64 {
	q := resources.ToQuantity(r, a)
	return q.AsApproximateFloat64()
}

// limit is +Inf for an unset limit.
func limit(q *resource.Quantity) float64 {
	if q == nil {
		return math.Inf(1)
	}
	return q.AsApproximateFloat64()
}
