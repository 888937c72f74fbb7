// Package why explains, from a cluster's live state, why a Workload waits:
// which ClusterQueue and flavors it was tried on, how much of each resource
// it needs against what is free and who holds the rest, whether preemption
// would help, what else blocks it (a stopped queue, a pending admission
// check, a missing LocalQueue, a namespace the ClusterQueue does not
// select, StrictFIFO's head), how many workloads are ahead of it, and when
// it will likely start. The answer comes from Kuota's own scheduling core
// run over the live objects (one cycle for the reasons, the simulator run
// forward for the estimate), so it says what the scheduler would do.
package why

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/lifecycle"
)

// State is the part of a cluster an explanation reads.
type State struct {
	Now             time.Time
	Workloads       []kueue.Workload
	ClusterQueues   []kueue.ClusterQueue
	LocalQueues     []kueue.LocalQueue
	Flavors         []kueue.ResourceFlavor
	Cohorts         []kueue.Cohort
	Priorities      []kueue.WorkloadPriorityClass
	AdmissionChecks []kueue.AdmissionCheck
	// Namespaces holds namespace labels; NamespacesUnknown is set when
	// they could not be read (a tenant may not list namespaces), and
	// namespace selectors are then not checked.
	Namespaces        map[string]map[string]string
	NamespacesUnknown bool
	// Topologies, Nodes and the Pods bound to nodes are read when some
	// flavor names a Topology (topology-aware scheduling); TopologyUnknown
	// is set when the caller may not list them, and topology-aware
	// flavors then show no capacity.
	Topologies      []kueue.Topology
	Nodes           []corev1.Node
	Pods            []corev1.Pod
	TopologyUnknown bool
	// LimitRanges bound the pods of pending workloads; none when the
	// caller may not list them.
	LimitRanges []corev1.LimitRange
	// ClaimTemplates are the ResourceClaimTemplates, read when a workload
	// claims devices through one (DRA); ClaimTemplatesUnknown is set when
	// they could not be listed, and claims are then not charged.
	ClaimTemplates        []resourcev1.ResourceClaimTemplate
	ClaimTemplatesUnknown bool
}

// Read lists what an explanation needs. Cohorts, WorkloadPriorityClasses,
// AdmissionChecks and Namespaces a caller may not list are taken as none
// (namespaces: unknown), so that a tenant with read access to the queues
// and Workloads still gets an answer.
func Read(ctx context.Context, c client.Reader) (*State, error) {
	st := &State{Now: time.Now(), Namespaces: map[string]map[string]string{}}
	required := []struct {
		what string
		list client.ObjectList
	}{
		{"Workloads", &kueue.WorkloadList{}}, {"ClusterQueues", &kueue.ClusterQueueList{}},
		{"LocalQueues", &kueue.LocalQueueList{}}, {"ResourceFlavors", &kueue.ResourceFlavorList{}},
	}
	for _, r := range required {
		if err := c.List(ctx, r.list); err != nil {
			return nil, fmt.Errorf("listing %s: %w", r.what, err)
		}
	}
	st.Workloads = required[0].list.(*kueue.WorkloadList).Items
	st.ClusterQueues = required[1].list.(*kueue.ClusterQueueList).Items
	st.LocalQueues = required[2].list.(*kueue.LocalQueueList).Items
	st.Flavors = required[3].list.(*kueue.ResourceFlavorList).Items

	var cohorts kueue.CohortList
	var wpcs kueue.WorkloadPriorityClassList
	var checks kueue.AdmissionCheckList
	for _, r := range []struct {
		what string
		list client.ObjectList
	}{{"Cohorts", &cohorts}, {"WorkloadPriorityClasses", &wpcs}, {"AdmissionChecks", &checks}} {
		if err := c.List(ctx, r.list); err != nil && !optional(err) {
			return nil, fmt.Errorf("listing %s: %w", r.what, err)
		}
	}
	st.Cohorts, st.Priorities, st.AdmissionChecks = cohorts.Items, wpcs.Items, checks.Items
	var lrs corev1.LimitRangeList
	if err := c.List(ctx, &lrs); err != nil && !optional(err) {
		return nil, fmt.Errorf("listing LimitRanges: %w", err)
	}
	st.LimitRanges = lrs.Items
	if slices.ContainsFunc(st.Workloads, func(wl kueue.Workload) bool { return lifecycle.ClaimsThroughTemplates(&wl) }) {
		var rcts resourcev1.ResourceClaimTemplateList
		if err := c.List(ctx, &rcts); err != nil {
			if !optional(err) && !meta.IsNoMatchError(err) && !runtime.IsNotRegisteredError(err) {
				return nil, fmt.Errorf("listing ResourceClaimTemplates: %w", err)
			}
			st.ClaimTemplatesUnknown = true
		}
		st.ClaimTemplates = rcts.Items
	}
	var nss corev1.NamespaceList
	if err := c.List(ctx, &nss); err != nil {
		if !optional(err) {
			return nil, fmt.Errorf("listing Namespaces: %w", err)
		}
		st.NamespacesUnknown = true
	}
	for _, ns := range nss.Items {
		st.Namespaces[ns.Name] = ns.Labels
	}
	if err := readTopology(ctx, c, st); err != nil {
		return nil, err
	}
	return st, nil
}

// readTopology lists the Topologies, nodes and bound pods when some flavor
// names a Topology.
func readTopology(ctx context.Context, c client.Reader, st *State) error {
	if !slices.ContainsFunc(st.Flavors, func(f kueue.ResourceFlavor) bool { return f.Spec.TopologyName != nil }) {
		return nil
	}
	var topologies kueue.TopologyList
	var nodes corev1.NodeList
	var pods corev1.PodList
	bound := client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("spec.nodeName", "")}
	for _, r := range []struct {
		what string
		list client.ObjectList
		opts []client.ListOption
	}{{"Topologies", &topologies, nil}, {"Nodes", &nodes, nil}, {"Pods", &pods, []client.ListOption{bound}}} {
		if err := c.List(ctx, r.list, r.opts...); err != nil {
			if !optional(err) {
				return fmt.Errorf("listing %s: %w", r.what, err)
			}
			st.TopologyUnknown = true
			return nil
		}
	}
	st.Topologies, st.Nodes, st.Pods = topologies.Items, nodes.Items, pods.Items
	return nil
}

// optional reports an error that leaves an optional kind empty: the
// caller may not list it, or the API server does not serve it.
func optional(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err)
}
