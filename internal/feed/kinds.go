package feed

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/lifecycle"
	"github.com/kuota-dev/kuota/internal/queueing"
	"github.com/kuota-dev/kuota/internal/state"
)

// Register adds the handlers of every fed kind to the manager's informers
// (before the manager starts). Handlers for one kind run one at a time, in
// the informer's order.
func Register(ctx context.Context, inf ctrlcache.Informers, c *cache.Cache) (*Feeder, error) {
	f := &Feeder{cache: c}
	steps := []func() error{
		func() error { return register(ctx, f, inf, namespaces(c)) },
		func() error { return register(ctx, f, inf, limitRanges(c)) },
		func() error { return register(ctx, f, inf, flavors(c)) },
		func() error { return register(ctx, f, inf, topologies(c)) },
		func() error { return register(ctx, f, inf, checks(c)) },
		func() error { return register(ctx, f, inf, priorityClasses(c)) },
		func() error { return register(ctx, f, inf, cohorts(c)) },
		func() error { return register(ctx, f, inf, clusterQueues(c)) },
		func() error { return register(ctx, f, inf, localQueues(c)) },
		func() error { return register(ctx, f, inf, workloads(c)) },
	}
	if len(c.Options().DeviceClasses) > 0 {
		// Before the Workloads: a pending workload's claims are counted
		// from the templates of its namespace.
		steps = slices.Insert(steps, len(steps)-1, func() error { return register(ctx, f, inf, claimTemplates(c)) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// specChanged reports a change of the spec (metadata.generation) or of
// the deletion state: what a controller that feeds the scheduler reads of
// Kuota's queue kinds. Status writes change neither.
func specChanged(old, new client.Object) bool {
	return old.GetGeneration() != new.GetGeneration() || old.GetDeletionTimestamp().IsZero() != new.GetDeletionTimestamp().IsZero()
}

func namespaces(c *cache.Cache) kind[*corev1.Namespace] {
	return kind[*corev1.Namespace]{
		name:     "Namespace",
		newObj:   func() *corev1.Namespace { return &corev1.Namespace{} },
		relevant: func(o, n *corev1.Namespace) bool { return !maps.Equal(o.Labels, n.Labels) },
		set:      func(ns *corev1.Namespace) { c.SetNamespace(ns.Name, ns.Labels) },
		del:      func(ns *corev1.Namespace) { c.DeleteNamespace(ns.Name) },
	}
}

// limitRanges records the bounds pending workloads' pods must respect.
func limitRanges(c *cache.Cache) kind[*corev1.LimitRange] {
	return kind[*corev1.LimitRange]{
		name:     "LimitRange",
		newObj:   func() *corev1.LimitRange { return &corev1.LimitRange{} },
		relevant: func(o, n *corev1.LimitRange) bool { return !equality.Semantic.DeepEqual(o.Spec, n.Spec) },
		set:      func(lr *corev1.LimitRange) { c.SetLimitRange(lr.Namespace, lr.Name, lr.Spec) },
		del:      func(lr *corev1.LimitRange) { c.DeleteLimitRange(lr.Namespace, lr.Name) },
	}
}

// +kubebuilder:rbac:groups=resource.k8s.io,resources=resourceclaimtemplates,verbs=get;list;watch

// claimTemplates records what quota reads of ResourceClaimTemplates (DRA).
func claimTemplates(c *cache.Cache) kind[*resourcev1.ResourceClaimTemplate] {
	return kind[*resourcev1.ResourceClaimTemplate]{
		name:     "ResourceClaimTemplate",
		newObj:   func() *resourcev1.ResourceClaimTemplate { return &resourcev1.ResourceClaimTemplate{} },
		relevant: func(o, n *resourcev1.ResourceClaimTemplate) bool { return !equality.Semantic.DeepEqual(o.Spec, n.Spec) },
		set: func(t *resourcev1.ResourceClaimTemplate) {
			c.SetClaimTemplate(t.Namespace, t.Name, lifecycle.NewClaimTemplate(&t.Spec))
		},
		del: func(t *resourcev1.ResourceClaimTemplate) { c.DeleteClaimTemplate(t.Namespace, t.Name) },
	}
}

func flavors(c *cache.Cache) kind[*kueue.ResourceFlavor] {
	return kind[*kueue.ResourceFlavor]{
		name:     "ResourceFlavor",
		newObj:   func() *kueue.ResourceFlavor { return &kueue.ResourceFlavor{} },
		relevant: func(o, n *kueue.ResourceFlavor) bool { return specChanged(o, n) },
		set: func(rf *kueue.ResourceFlavor) {
			if !rf.DeletionTimestamp.IsZero() {
				c.DeleteFlavor(kueue.ResourceFlavorReference(rf.Name))
				return
			}
			c.SetFlavor(state.NewFlavor(rf))
		},
		del: func(rf *kueue.ResourceFlavor) { c.DeleteFlavor(kueue.ResourceFlavorReference(rf.Name)) },
	}
}

// checkActive is what the scheduler reads of an AdmissionCheck: whether it
// exists, is not being deleted, and its controller says it is Active.
func checkActive(ac *kueue.AdmissionCheck) bool {
	return meta.IsStatusConditionTrue(ac.Status.Conditions, kueue.AdmissionCheckActive)
}

func checks(c *cache.Cache) kind[*kueue.AdmissionCheck] {
	return kind[*kueue.AdmissionCheck]{
		name:   "AdmissionCheck",
		newObj: func() *kueue.AdmissionCheck { return &kueue.AdmissionCheck{} },
		relevant: func(o, n *kueue.AdmissionCheck) bool {
			return checkActive(o) != checkActive(n) || o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero()
		},
		set: func(ac *kueue.AdmissionCheck) {
			if !ac.DeletionTimestamp.IsZero() {
				c.DeleteAdmissionCheck(kueue.AdmissionCheckReference(ac.Name))
				return
			}
			c.SetAdmissionCheck(kueue.AdmissionCheckReference(ac.Name), checkActive(ac), ac.Spec.ControllerName)
		},
		del: func(ac *kueue.AdmissionCheck) { c.DeleteAdmissionCheck(kueue.AdmissionCheckReference(ac.Name)) },
	}
}

func priorityClasses(c *cache.Cache) kind[*kueue.WorkloadPriorityClass] {
	return kind[*kueue.WorkloadPriorityClass]{
		name:     "WorkloadPriorityClass",
		newObj:   func() *kueue.WorkloadPriorityClass { return &kueue.WorkloadPriorityClass{} },
		relevant: func(o, n *kueue.WorkloadPriorityClass) bool { return o.Value != n.Value },
		set:      func(p *kueue.WorkloadPriorityClass) { c.SetPriorityClass(p.Name, p.Value) },
		del:      func(p *kueue.WorkloadPriorityClass) { c.DeletePriorityClass(p.Name) },
	}
}

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=cohorts,verbs=get;list;watch

func cohorts(c *cache.Cache) kind[*kueue.Cohort] {
	return kind[*kueue.Cohort]{
		name:     "Cohort",
		newObj:   func() *kueue.Cohort { return &kueue.Cohort{} },
		relevant: func(o, n *kueue.Cohort) bool { return specChanged(o, n) },
		set: func(co *kueue.Cohort) {
			if !co.DeletionTimestamp.IsZero() {
				c.DeleteCohort(kueue.CohortReference(co.Name))
				return
			}
			cohort, err := state.NewCohort(co)
			if err != nil {
				// The webhook refuses such specs; one that slipped
				// through is left out, as an invalid ClusterQueue is.
				c.DeleteCohort(kueue.CohortReference(co.Name))
				return
			}
			c.SetCohort(cohort)
		},
		del: func(co *kueue.Cohort) { c.DeleteCohort(kueue.CohortReference(co.Name)) },
	}
}

// clusterQueues records ClusterQueues; a terminating one stays, marked,
// until its object is gone and its last reservation released. One the
// webhook should have refused (an invalid selector) is left out of
// scheduling; the ClusterQueue controller reports it.
func clusterQueues(c *cache.Cache) kind[*kueue.ClusterQueue] {
	return kind[*kueue.ClusterQueue]{
		name:   "ClusterQueue",
		newObj: func() *kueue.ClusterQueue { return &kueue.ClusterQueue{} },
		relevant: func(o, n *kueue.ClusterQueue) bool {
			return specChanged(o, n) || len(o.Finalizers) != len(n.Finalizers)
		},
		set: func(obj *kueue.ClusterQueue) {
			cq, err := state.NewClusterQueue(obj)
			if err != nil {
				c.DeleteClusterQueue(kueue.ClusterQueueReference(obj.Name))
				return
			}
			cq.AwaitingFinalizer = !slices.Contains(obj.Finalizers, kueue.ResourceInUseFinalizerName)
			c.SetClusterQueue(cq)
		},
		del: func(obj *kueue.ClusterQueue) { c.DeleteClusterQueue(kueue.ClusterQueueReference(obj.Name)) },
	}
}

func localQueues(c *cache.Cache) kind[*kueue.LocalQueue] {
	key := func(lq *kueue.LocalQueue) queueing.LocalQueueKey {
		return queueing.LocalQueueKey{Namespace: lq.Namespace, Name: kueue.LocalQueueName(lq.Name)}
	}
	return kind[*kueue.LocalQueue]{
		name:     "LocalQueue",
		newObj:   func() *kueue.LocalQueue { return &kueue.LocalQueue{} },
		relevant: func(o, n *kueue.LocalQueue) bool { return specChanged(o, n) },
		set: func(lq *kueue.LocalQueue) {
			if !lq.DeletionTimestamp.IsZero() {
				c.DeleteLocalQueue(key(lq))
				return
			}
			stop := kueue.None
			if lq.Spec.StopPolicy != nil {
				stop = *lq.Spec.StopPolicy
			}
			c.SetLocalQueue(key(lq), lq.Spec.ClusterQueue, stop)
			c.SetLocalQueueFairSharing(lq)
		},
		del: func(lq *kueue.LocalQueue) { c.DeleteLocalQueue(key(lq)) },
	}
}

// workloads places every Workload version the informer shows; the cache
// makes an update that changes nothing it reads cost O(1).
func workloads(c *cache.Cache) kind[*kueue.Workload] {
	return kind[*kueue.Workload]{
		name:     "Workload",
		newObj:   func() *kueue.Workload { return &kueue.Workload{} },
		relevant: func(o, n *kueue.Workload) bool { return o.ResourceVersion != n.ResourceVersion },
		set:      c.UpsertWorkload,
		del:      func(wl *kueue.Workload) { c.DeleteWorkload(lifecycle.KeyOf(wl)) },
	}
}
