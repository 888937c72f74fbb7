package app

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/controller/admissioncheck"
	"github.com/kuota-dev/kuota/internal/controller/clusterqueue"
	"github.com/kuota-dev/kuota/internal/controller/cohort"
	"github.com/kuota-dev/kuota/internal/controller/localqueue"
	"github.com/kuota-dev/kuota/internal/controller/namespace"
	"github.com/kuota-dev/kuota/internal/controller/resourceflavor"
	"github.com/kuota-dev/kuota/internal/controller/status"
	"github.com/kuota-dev/kuota/internal/controller/workload"
	"github.com/kuota-dev/kuota/internal/controller/workloadpriorityclass"
	"github.com/kuota-dev/kuota/internal/metrics"
	"github.com/kuota-dev/kuota/internal/scheduler"
	"github.com/kuota-dev/kuota/internal/scheduling"
	"github.com/kuota-dev/kuota/internal/scheduling/flavors"
	"github.com/kuota-dev/kuota/internal/scheduling/preemption"
)

// loader lists one kind and reconciles every object, to fill the cache
// before the scheduler's first cycle.
type loader struct {
	list      client.ObjectList
	reconcile reconcile.Reconciler
}

func (m *Manager) setupControllers(cfg *configapi.Configuration) error {
	c, mgr := m.Cache, m.Manager
	cl := mgr.GetClient()
	writer := newWriter(mgr)
	recorder := mgr.GetEventRecorderFor("kueue-admission")
	wl := &workload.Reconciler{Client: cl, Cache: c, Writer: writer, Recorder: recorder, Options: workloadOptions(cfg),
		Concurrency: concurrency(cfg, "Workload.kueue.x-k8s.io", 10)}
	reconcilers := []struct {
		setup interface{ SetupWithManager(ctrl.Manager) error }
		load  loader
	}{
		{&namespace.Reconciler{Client: cl, Cache: c}, loader{&corev1.NamespaceList{}, nil}},
		{&resourceflavor.Reconciler{Client: cl, Cache: c}, loader{&kueue.ResourceFlavorList{}, nil}},
		{&admissioncheck.Reconciler{Client: cl, Cache: c}, loader{&kueue.AdmissionCheckList{}, nil}},
		{&workloadpriorityclass.Reconciler{Client: cl, Cache: c}, loader{&kueue.WorkloadPriorityClassList{}, nil}},
		{&cohort.Reconciler{Client: cl, Cache: c}, loader{&kueue.CohortList{}, nil}},
		{&clusterqueue.Reconciler{Client: cl, Cache: c, Recorder: recorder}, loader{&kueue.ClusterQueueList{}, nil}},
		{&localqueue.Reconciler{Client: cl, Cache: c}, loader{&kueue.LocalQueueList{}, nil}},
		{wl, loader{&kueue.WorkloadList{}, nil}},
	}
	var loaders []loader
	for _, r := range reconcilers {
		if err := r.setup.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up %T: %w", r.setup, err)
		}
		l := r.load
		l.reconcile = r.setup.(reconcile.Reconciler)
		loaders = append(loaders, l)
	}
	if err := setupJobs(mgr, cfg); err != nil {
		return err
	}
	labels, metricOpts, err := metricsSetup(cfg, cl, c)
	if err != nil {
		return err
	}
	wl.Labels = labels
	metrics.SetReplicaRole(initialRole(cfg))
	if initialRole(cfg) == metrics.RoleFollower {
		if err := mgr.Add(roleTracker{}); err != nil {
			return fmt.Errorf("adding replica role tracker: %w", err)
		}
	}
	fair := cfg.FairSharing != nil
	loaded := make(chan struct{})
	m.Reporter = &status.Reporter{Client: cl, Cache: c, FairSharing: fair, Metrics: metricOpts, Loaded: loaded}
	m.Scheduler = &scheduler.Scheduler{
		Cache: c, Client: cl, APIReader: mgr.GetAPIReader(), Writer: writer, Recorder: recorder, Labels: labels,
		Options:        schedulingOptions(cfg),
		BlockAdmission: cfg.WaitForPodsReady != nil && ptr.Deref(cfg.WaitForPodsReady.BlockAdmission, false),
		Barrier: func(ctx context.Context) error {
			if err := m.load(ctx, loaders); err != nil {
				return err
			}
			close(loaded)
			return nil
		},
	}
	if err := mgr.Add(m.Reporter); err != nil {
		return fmt.Errorf("adding status reporter: %w", err)
	}
	if err := mgr.Add(m.Scheduler); err != nil {
		return fmt.Errorf("adding scheduler: %w", err)
	}
	return nil
}

// load is the scheduler's start barrier: once the informers have synced,
// every object is reconciled into the cache, in dependency order, so that
// the first cycle sees the whole cluster (no double admission, no usage
// missing after a restart).
func (m *Manager) load(ctx context.Context, loaders []loader) error {
	if !m.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("informer caches did not sync")
	}
	for _, l := range loaders {
		list := l.list.DeepCopyObject().(client.ObjectList)
		if err := m.GetClient().List(ctx, list); err != nil {
			return fmt.Errorf("listing %T: %w", list, err)
		}
		items, err := metaItems(list)
		if err != nil {
			return err
		}
		for _, key := range items {
			if _, err := l.reconcile.Reconcile(ctx, reconcile.Request{NamespacedName: key}); err != nil {
				// Not fatal: the controller retries; the cache is still fed
				// from what the object says.
				ctrl.LoggerFrom(ctx).V(1).Info("initial reconcile failed", "object", key, "error", err.Error())
			}
		}
	}
	return nil
}

func workloadOptions(cfg *configapi.Configuration) workload.Options {
	o := workload.Options{RequeueAtEvictionTime: true}
	if r := cfg.Resources; r != nil {
		o.ExcludedResourcePrefixes = r.ExcludeResourcePrefixes
	}
	if w := cfg.WaitForPodsReady; w != nil {
		o.PodsReady = podsReadyOptions(w)
		if rs := w.RequeuingStrategy; rs != nil && rs.Timestamp != nil {
			o.RequeueAtEvictionTime = *rs.Timestamp == configapi.EvictionTimestamp
		}
	}
	return o
}

// podsReadyOptions converts waitForPodsReady (defaulted by the loader).
func podsReadyOptions(w *configapi.WaitForPodsReady) *workload.PodsReadyOptions {
	o := &workload.PodsReadyOptions{Timeout: w.Timeout.Duration, RecoveryTimeout: w.Timeout.Duration,
		Backoff: apply.Backoff{Base: 60 * time.Second, Max: time.Hour}}
	if w.RecoveryTimeout != nil {
		o.RecoveryTimeout = w.RecoveryTimeout.Duration
	}
	if rs := w.RequeuingStrategy; rs != nil {
		o.Backoff.Limit = rs.BackoffLimitCount
		if rs.BackoffBaseSeconds != nil {
			o.Backoff.Base = time.Duration(*rs.BackoffBaseSeconds) * time.Second
		}
		if rs.BackoffMaxSeconds != nil {
			o.Backoff.Max = time.Duration(*rs.BackoffMaxSeconds) * time.Second
		}
	}
	return o
}

func schedulingOptions(cfg *configapi.Configuration) scheduling.Options {
	o := scheduling.Options{}
	if r := cfg.Resources; r != nil && r.QuotaCheckStrategy != nil {
		o.Flavors = flavors.Options{IgnoreUndeclared: *r.QuotaCheckStrategy == configapi.QuotaCheckIgnoreUndeclared}
	}
	if fs := cfg.FairSharing; fs != nil {
		o.FairSharing = &scheduling.FairSharing{}
		for _, s := range fs.PreemptionStrategies {
			o.FairSharing.Strategies = append(o.FairSharing.Strategies, preemption.Strategy(s))
		}
	}
	return o
}

func concurrency(cfg *configapi.Configuration, groupKind string, def int) int {
	if c := cfg.Controller; c != nil {
		if n, ok := c.GroupKindConcurrency[groupKind]; ok && n > 0 {
			return n
		}
	}
	return def
}
