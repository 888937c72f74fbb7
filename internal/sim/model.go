package sim

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Setup is the queue configuration a simulation runs on: Kueue's objects.
type Setup struct {
	Flavors       []*kueue.ResourceFlavor
	Cohorts       []*kueue.Cohort
	ClusterQueues []*kueue.ClusterQueue
	LocalQueues   []*kueue.LocalQueue
	// Priorities are WorkloadPriorityClasses (for workloads that name one).
	Priorities []*kueue.WorkloadPriorityClass
	// Namespaces holds the labels of namespaces (for namespace selectors);
	// namespaces of LocalQueues not listed have no labels.
	Namespaces map[string]map[string]string
	// AdmissionChecks are the AdmissionChecks by name, with whether each
	// is active (a ClusterQueue naming a missing or inactive one admits
	// nothing).
	AdmissionChecks map[kueue.AdmissionCheckReference]bool
	// CheckControllers are the checks' controllerNames, where known (a
	// MultiKueue check's ClusterQueue leaves topology placement to the
	// worker clusters).
	CheckControllers map[kueue.AdmissionCheckReference]string
	// Topologies and Nodes are the cluster of topology-aware flavors
	// (flavors naming a Topology): their PodSets are placed on the nodes,
	// whose capacity admitted workloads' topology assignments take, and
	// Pods (a live cluster's pods bound to nodes, placed without
	// topology) take too.
	Topologies []*kueue.Topology
	Nodes      []*corev1.Node
	Pods       []*corev1.Pod
}

// Workload is one workload of a trace.
type Workload struct {
	Namespace string
	Name      string
	Queue     kueue.LocalQueueName
	// Class groups workloads in the figures ("" counts as the queue name).
	Class    string
	Priority int32
	// PriorityClass names a WorkloadPriorityClass (used when Priority is 0
	// and the class is known).
	PriorityClass string
	// Arrive is when the workload is created, from the start.
	Arrive time.Duration
	// SeenAfter is how long after its arrival the scheduler first sees it
	// (a replay of a live run: the API server's and the watch's delay);
	// time to admission counts from the arrival.
	SeenAfter time.Duration
	// Runtime is how long it runs once admitted.
	Runtime time.Duration
	// MaxExecution, when set, is spec.maximumExecutionTimeSeconds.
	MaxExecution time.Duration
	PodSets      []kueue.PodSet
	// CreatedBefore is how long before its arrival the workload was
	// created: a live cluster's pending workloads all arrive at the start
	// of a simulation run forward from now, in their creation order.
	CreatedBefore time.Duration
	// Admission, when set, makes the workload hold that admission from its
	// arrival (a live cluster's running workload); Runtime is then what is
	// left of its run.
	Admission *kueue.Admission
	// RanFor is how long a workload with an Admission has held it before
	// its arrival (its reservation is stamped that far back, so that its
	// expected end from MaxExecution is right).
	RanFor time.Duration
}

// FromScenario turns a benchmark scenario's plan into a setup and a trace,
// with the same objects the benchmark creates: the plan's own flavor, or a
// plain one named flavor, and a topology scenario's Topology and nodes.
func FromScenario(plan *scenario.Plan, flavor string) (*Setup, []Workload) {
	rf := plan.ResourceFlavor(flavor)
	s := &Setup{Flavors: []*kueue.ResourceFlavor{rf}}
	if plan.Topology != nil {
		s.Topologies = append(s.Topologies, plan.Topology.DeepCopy())
	}
	for i := range plan.Nodes {
		s.Nodes = append(s.Nodes, plan.Nodes[i].DeepCopy())
	}
	for _, c := range plan.Cohorts {
		s.Cohorts = append(s.Cohorts, scenario.CohortObject(c))
	}
	for _, q := range plan.Queues {
		s.ClusterQueues = append(s.ClusterQueues, q.ClusterQueueObject(rf.Name))
		s.LocalQueues = append(s.LocalQueues, q.LocalQueueObject())
	}
	trace := make([]Workload, 0, len(plan.Workloads))
	for _, w := range plan.Workloads {
		obj := w.WorkloadObject()
		trace = append(trace, Workload{Namespace: obj.Namespace, Name: obj.Name, Queue: obj.Spec.QueueName, Class: w.Class,
			Priority: w.Priority, Arrive: w.Due, Runtime: w.Runtime, PodSets: obj.Spec.PodSets})
	}
	return s, trace
}

// classOf returns the class a queue's figures are grouped under: its
// bench.kuota.dev/class label, or its name.
func classOf(cq *kueue.ClusterQueue) string {
	if c := cq.Labels[scenario.ClassLabel]; c != "" {
		return c
	}
	return cq.Name
}

// validate checks a trace for what the simulation cannot run.
func validate(trace []Workload) error {
	seen := map[string]bool{}
	for i, w := range trace {
		key := w.Namespace + "/" + w.Name
		switch {
		case w.Name == "" || w.Namespace == "" || w.Queue == "":
			return fmt.Errorf("trace[%d]: namespace, name and queue are required", i)
		case seen[key]:
			return fmt.Errorf("trace[%d]: workload %s appears twice", i, key)
		case len(w.PodSets) == 0:
			return fmt.Errorf("trace[%d] (%s): no pod sets", i, key)
		case w.Arrive < 0 || w.SeenAfter < 0 || w.Runtime < 0 || w.CreatedBefore < 0 || w.RanFor < 0:
			return fmt.Errorf("trace[%d] (%s): arrival and runtime must not be negative", i, key)
		}
		seen[key] = true
	}
	return nil
}
