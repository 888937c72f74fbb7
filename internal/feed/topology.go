package feed

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/cache"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/resources"
	"github.com/kuota-dev/kuota/internal/state"
)

// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=topologies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// TASPodLabel marks the pods Kuota placed by topology: their capacity is
// counted from their Workload's topology assignment, not from the pod.
const TASPodLabel = jobframework.TASLabel

func topologies(c *cache.Cache) kind[*kueue.Topology] {
	levels := func(t *kueue.Topology) []string {
		out := make([]string, len(t.Spec.Levels))
		for i, l := range t.Spec.Levels {
			out[i] = l.NodeLabel
		}
		return out
	}
	return kind[*kueue.Topology]{
		name:     "Topology",
		newObj:   func() *kueue.Topology { return &kueue.Topology{} },
		relevant: func(o, n *kueue.Topology) bool { return specChanged(o, n) },
		set: func(t *kueue.Topology) {
			if !t.DeletionTimestamp.IsZero() {
				c.DeleteTopology(kueue.TopologyReference(t.Name))
				return
			}
			c.SetTopology(kueue.TopologyReference(t.Name), levels(t))
		},
		del: func(t *kueue.Topology) { c.DeleteTopology(kueue.TopologyReference(t.Name)) },
	}
}

// NodeOf converts what topology-aware scheduling reads of a node.
func NodeOf(n *corev1.Node) *state.Node {
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	// The kubelet reports what a node has; an amount beyond what Kuota
	// counts is resources.Max, more than any pod asks.
	allocatable, _ := resources.FromResourceList(n.Status.Allocatable)
	return &state.Node{
		Name: n.Name, Labels: n.Labels, Taints: n.Spec.Taints,
		Allocatable: allocatable,
		Schedulable: ready && !n.Spec.Unschedulable,
		Ready:       ready,
	}
}

func nodes(c *cache.Cache) kind[*corev1.Node] {
	return kind[*corev1.Node]{
		name:   "Node",
		newObj: func() *corev1.Node { return &corev1.Node{} },
		relevant: func(o, n *corev1.Node) bool {
			a, b := NodeOf(o), NodeOf(n)
			return a.Schedulable != b.Schedulable || a.Ready != b.Ready || !maps.Equal(a.Labels, b.Labels) || !maps.Equal(a.Allocatable, b.Allocatable) ||
				!equality.Semantic.DeepEqual(a.Taints, b.Taints)
		},
		set: func(n *corev1.Node) { c.SetNode(NodeOf(n)) },
		del: func(n *corev1.Node) { c.DeleteNode(n.Name) },
	}
}

// PodUsage returns the node a pod occupies and its requests (with one
// `pods`); no node for a pod that ended or is not bound.
func PodUsage(p *corev1.Pod) (string, resources.Requests) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return "", nil
	}
	// A pod the API server accepted asks for what the kubelet can place;
	// an amount beyond what Kuota counts is resources.Max (the node is full).
	req, _ := resources.PodRequests(&p.Spec)
	req[corev1.ResourcePods] = resources.Unit(corev1.ResourcePods)
	return p.Spec.NodeName, req
}

func pods(c *cache.Cache) kind[*corev1.Pod] {
	key := func(p *corev1.Pod) types.NamespacedName {
		return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	}
	return kind[*corev1.Pod]{
		name:   "Pod",
		newObj: func() *corev1.Pod { return &corev1.Pod{} },
		relevant: func(o, n *corev1.Pod) bool {
			on, oreq := PodUsage(o)
			nn, nreq := PodUsage(n)
			return on != nn || !maps.Equal(oreq, nreq)
		},
		set: func(p *corev1.Pod) {
			node, req := PodUsage(p)
			c.SetPodUsage(key(p), node, req)
		},
		del: func(p *corev1.Pod) { c.DeletePodUsage(key(p)) },
	}
}

// trimPod keeps what PodUsage reads.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	keep := func(cs []corev1.Container) []corev1.Container {
		out := make([]corev1.Container, len(cs))
		for i, c := range cs {
			out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
		}
		return out
	}
	return &corev1.Pod{
		TypeMeta: p.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion,
			Labels: p.Labels, DeletionTimestamp: p.DeletionTimestamp},
		Spec: corev1.PodSpec{NodeName: p.Spec.NodeName, Containers: keep(p.Spec.Containers), InitContainers: keep(p.Spec.InitContainers),
			Overhead: p.Spec.Overhead, Resources: p.Spec.Resources},
		Status: corev1.PodStatus{Phase: p.Status.Phase},
	}, nil
}

// TopologyCapacity feeds the nodes and pods that give the TAS flavors'
// free capacity. It watches nothing until some ResourceFlavor names a
// Topology (most clusters never pay for a watch of every node and pod);
// then it starts a Node informer in the manager's cache and a cache of its
// own for the pods bound to nodes that Kuota did not place by topology,
// trimmed to their requests. Placement waits until both have listed
// (cache.MarkTopologySynced). It runs on every replica, like the rest of
// the feed.
type TopologyCapacity struct {
	Cache    *cache.Cache
	Informer ctrlcache.Informers
	// NewPodCache builds the pod cache from options (ctrlcache.New with
	// the manager's config and scheme).
	NewPodCache func(ctrlcache.Options) (ctrlcache.Cache, error)
	// Poll is how often it checks for a TAS flavor (default 1 s).
	Poll time.Duration
}

// NeedLeaderElection is false: followers keep their cache fed too.
func (t *TopologyCapacity) NeedLeaderElection() bool { return false }

// Start waits for a TAS flavor, then feeds until ctx ends.
func (t *TopologyCapacity) Start(ctx context.Context) error {
	poll := t.Poll
	if poll <= 0 {
		poll = time.Second
	}
	for !t.Cache.HasTopologyFlavors() {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
	log.FromContext(ctx).Info("a ResourceFlavor names a Topology: watching nodes and pods for topology-aware scheduling")
	f := &Feeder{cache: t.Cache}
	if err := register(ctx, f, t.Informer, nodes(t.Cache)); err != nil {
		return err
	}
	podCache, err := t.NewPodCache(podCacheOptions())
	if err != nil {
		return fmt.Errorf("creating the pod cache for topology-aware scheduling: %w", err)
	}
	go func() {
		if err := podCache.Start(ctx); err != nil {
			log.FromContext(ctx).Error(err, "pod cache for topology-aware scheduling stopped")
		}
	}()
	if err := register(ctx, f, podCache, pods(t.Cache)); err != nil {
		return err
	}
	if !f.waitHandlers(ctx) {
		return nil
	}
	t.Cache.MarkTopologySynced()
	<-ctx.Done()
	return nil
}

// waitHandlers waits until every handler has delivered its informer's
// initial list; false when ctx ended first.
func (f *Feeder) waitHandlers(ctx context.Context) bool {
	for slices.ContainsFunc(f.regs, func(r registration) bool { return !r.reg.HasSynced() }) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// podCacheOptions selects running pods bound to a node and not placed by
// topology, trimmed to what PodUsage reads.
func podCacheOptions() ctrlcache.Options {
	notTAS, _ := labels.NewRequirement(TASPodLabel, selection.NotEquals, []string{"true"})
	bound := fields.AndSelectors(
		fields.OneTermNotEqualSelector("spec.nodeName", ""),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
		fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
	)
	return ctrlcache.Options{
		ByObject: map[client.Object]ctrlcache.ByObject{
			&corev1.Pod{}: {Label: labels.NewSelector().Add(*notTAS), Field: bound, Transform: trimPod},
		},
	}
}
