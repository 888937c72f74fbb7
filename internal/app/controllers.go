package app

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/apply"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/controller/admissioncheck"
	"github.com/kuota-dev/kuota/internal/controller/clusterqueue"
	"github.com/kuota-dev/kuota/internal/controller/multicluster"
	"github.com/kuota-dev/kuota/internal/controller/provisioningrequest"
	"github.com/kuota-dev/kuota/internal/controller/resourceflavor"
	"github.com/kuota-dev/kuota/internal/controller/status"
	"github.com/kuota-dev/kuota/internal/controller/topologyungater"
	"github.com/kuota-dev/kuota/internal/controller/workloads"
	"github.com/kuota-dev/kuota/internal/feed"
	"github.com/kuota-dev/kuota/internal/metrics"
	mkdecide "github.com/kuota-dev/kuota/internal/multikueue"
	"github.com/kuota-dev/kuota/internal/report"
	"github.com/kuota-dev/kuota/internal/scheduler"
	"github.com/kuota-dev/kuota/internal/settings"
	"github.com/kuota-dev/kuota/internal/state"
)

func (m *Manager) setupControllers(cfg *configapi.Configuration, patience time.Duration) error {
	c, mgr := m.Cache, m.Manager
	cl := mgr.GetClient()
	writer := newWriter(mgr)
	recorder := mgr.GetEventRecorderFor("kueue-admission")
	feeder, err := feed.Register(context.Background(), mgr.GetCache(), c)
	if err != nil {
		return fmt.Errorf("feeding the cache from the informers: %w", err)
	}
	if err := mgr.Add(&feed.TopologyCapacity{Cache: c, Informer: mgr.GetCache(), NewPodCache: func(o ctrlcache.Options) (ctrlcache.Cache, error) {
		o.Scheme, o.Mapper = mgr.GetScheme(), mgr.GetRESTMapper()
		return ctrlcache.New(mgr.GetConfig(), o)
	}}); err != nil {
		return fmt.Errorf("adding the topology capacity feed: %w", err)
	}
	labels, metricOpts, err := metricsSetup(cfg, cl, c)
	if err != nil {
		return err
	}
	wl := &workloads.Reconciler{Client: cl, Cache: c, Writer: writer, Recorder: recorder, Options: c.Options(), Labels: labels,
		Concurrency: concurrency(cfg, "Workload.kueue.x-k8s.io", 10)}
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&resourceflavor.Reconciler{Client: cl},
		&admissioncheck.Reconciler{Client: cl},
		&clusterqueue.Reconciler{Client: cl, Cache: c, Recorder: recorder},
		wl,
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up %T: %w", r, err)
		}
	}
	if err := setupJobs(mgr, cfg); err != nil {
		return err
	}
	tasPods, err := topologyungater.Setup(mgr)
	if err != nil {
		return err
	}
	if err := mgr.Add(&feed.BoundPods{Cache: c, Informers: tasPods}); err != nil {
		return fmt.Errorf("adding the feed of pods placed by topology: %w", err)
	}
	if err := provisioningrequest.Setup(mgr, writer); err != nil {
		return err
	}
	if err := setupMultiKueue(mgr, cfg, writer); err != nil {
		return err
	}
	c.OnGone(func(obj *kueue.Workload, a *state.Admitted) { recordFinished(labels, obj, a) })
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
		Options:        settings.Scheduling(cfg, patience),
		BlockAdmission: cfg.WaitForPodsReady != nil && ptr.Deref(cfg.WaitForPodsReady.BlockAdmission, false),
		Barrier: func(ctx context.Context) error {
			if err := feeder.Wait(ctx); err != nil {
				return err
			}
			awaitFinalizers(ctx, c)
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

// finalizerWait bounds how long the first cycle waits for the ClusterQueues
// found at start to get their finalizers.
const finalizerWait = 10 * time.Second

// awaitFinalizers holds the first scheduling cycle until every ClusterQueue
// found at start carries its finalizer (the ClusterQueue controller adds
// them within moments), so that queues that existed before the manager all
// start admitting together; one still without it after finalizerWait
// waits alone.
func awaitFinalizers(ctx context.Context, c *cache.Cache) {
	deadline := time.Now().Add(finalizerWait)
	for c.AwaitingFinalizers() > 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// recordFinished counts a workload that finished while holding quota
// recorded in this process (a restart does not count it twice).
func recordFinished(labels *report.Labels, wl *kueue.Workload, a *state.Admitted) {
	c := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadFinished)
	if c == nil || c.Status != metav1.ConditionTrue {
		return
	}
	ran := time.Duration(-1)
	if a.Admitted && a.ReservedAt > 0 {
		ran = max(0, c.LastTransitionTime.Time.Sub(time.Unix(0, a.ReservedAt)))
	}
	metrics.Finished(labels.Of(context.Background(), wl, a.ClusterQueue), ran)
}

func concurrency(cfg *configapi.Configuration, groupKind string, def int) int {
	if c := cfg.Controller; c != nil {
		if n, ok := c.GroupKindConcurrency[groupKind]; ok && n > 0 {
			return n
		}
	}
	return def
}

// setupMultiKueue runs MultiKueue, or, with its feature gate off, marks its
// checks inactive saying so.
func setupMultiKueue(mgr ctrl.Manager, cfg *configapi.Configuration, writer *apply.Writer) error {
	if on, set := cfg.FeatureGates["MultiKueue"]; set && !on {
		return (&admissioncheck.UnsupportedReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
	}
	enabled, _, err := jobIntegrations(cfg)
	if err != nil {
		return err
	}
	mk := cfg.MultiKueue
	o := multicluster.Options{Namespace: ptr.Deref(cfg.Namespace, configapi.DefaultNamespace),
		Origin: configapi.DefaultMultiKueueOrigin, WorkerLostTimeout: configapi.DefaultMultiKueueWorkerLostTimeout, CheckPaths: true,
		GCInterval: configapi.DefaultMultiKueueGCInterval}
	if on, set := cfg.FeatureGates["MultiKueueKubeConfigPathValidation"]; set && !on {
		o.CheckPaths = false
	}
	if on, set := cfg.FeatureGates["MultiKueueRemoteSpecSync"]; !set || on {
		o.SpecSync = true
	}
	if mk != nil {
		o.Origin = ptr.Deref(mk.Origin, o.Origin)
		if mk.WorkerLostTimeout != nil {
			o.WorkerLostTimeout = mk.WorkerLostTimeout.Duration
		}
		o.Dispatch = dispatch(mk, cfg.FeatureGates)
		if mk.GCInterval != nil {
			o.GCInterval = mk.GCInterval.Duration
		}
	}
	return multicluster.Setup(mgr, writer, enabled, o)
}

// incrementalRound is how often the incremental dispatcher nominates more
// worker clusters (Kueue's fixed five minutes).
const incrementalRound = 5 * time.Minute

// dispatch reads the dispatcher from the MultiKueue settings: all at
// once (the default), incremental in rounds of stepSize (3 by default;
// the MultiKueueIncrementalDispatcherConfig gate off keeps 3), or any
// other name: an external dispatcher nominates.
func dispatch(mk *configapi.MultiKueue, gates map[string]bool) mkdecide.Dispatch {
	switch name := ptr.Deref(mk.DispatcherName, configapi.MultiKueueDispatcherModeAllAtOnce); name {
	case configapi.MultiKueueDispatcherModeAllAtOnce, "":
		return mkdecide.Dispatch{}
	case configapi.MultiKueueDispatcherModeIncremental:
		step := int(configapi.DefaultIncrementalDispatcherStepSize)
		if on, set := gates["MultiKueueIncrementalDispatcherConfig"]; (!set || on) && mk.IncrementalDispatcherConfig != nil {
			step = int(ptr.Deref(mk.IncrementalDispatcherConfig.StepSize, int32(step)))
		}
		on, set := gates["MultiKueueIncrementalDispatcherRespectConfigOrder"]
		return mkdecide.Dispatch{Incremental: true, Step: step, Round: incrementalRound, Alphabetical: set && !on}
	default:
		return mkdecide.Dispatch{External: true}
	}
}
