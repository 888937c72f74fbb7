// Package scenario reads the generator configuration of a benchmark run, in
// the YAML format of Kueue's scalability test (cohorts, queue sets and
// workload sets), and expands it into a plan: the cohorts, ClusterQueues and
// LocalQueues to create, and every workload with the moment, relative to the
// start of the run, at which it is due.
//
// A cohort set of count N yields cohorts <className>-0..N-1. Each queue set
// yields count ClusterQueues per cohort, named
// <queueClass>-<setIndex>-<index>-<cohort>; each ClusterQueue gets a
// namespace and a LocalQueue of the same name. Within a ClusterQueue, the
// workload sets run side by side: the k-th workload of a set (counting the
// set's templates round-robin) is due at (k+1) x creationIntervalMs, the
// cadence Kueue's generator follows, here on an absolute clock so that slow
// creations do not shift later ones. A scenario with a topology also
// yields its cluster: a Topology, a ResourceFlavor following it, and the
// nodes (cluster.go).
package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// Config is a generator configuration.
type Config struct {
	Cohorts []CohortSet `json:"cohorts"`
	// Topology and ResourceFlavor are the topology-aware parts of Kueue's
	// format (its "tas" scenario): a scenario with a topology gets a
	// Topology, a flavor following it and one node per leaf (cluster.go),
	// and its Workloads carry their topology requests (topology.go).
	Topology       *Topology       `json:"topology,omitempty"`
	ResourceFlavor *ResourceFlavor `json:"resourceFlavor,omitempty"`
}

// CohortSet is a group of identical cohorts.
type CohortSet struct {
	ClassName  string      `json:"className"`
	Count      int         `json:"count"`
	QueuesSets []QueuesSet `json:"queuesSets"`
}

// QueuesSet is a group of identical ClusterQueues in each cohort of a set.
type QueuesSet struct {
	ClassName           string         `json:"className"`
	Count               int            `json:"count"`
	NominalQuota        string         `json:"nominalQuota"`
	BorrowingLimit      string         `json:"borrowingLimit"`
	ReclaimWithinCohort string         `json:"reclaimWithinCohort"`
	WithinClusterQueue  string         `json:"withinClusterQueue"`
	WorkloadsSets       []WorkloadsSet `json:"workloadsSets"`
}

// WorkloadsSet creates count rounds of its templates, one workload every
// creationIntervalMs.
type WorkloadsSet struct {
	Count              int        `json:"count"`
	CreationIntervalMs int        `json:"creationIntervalMs"`
	Workloads          []Template `json:"workloads"`
}

// Template describes one class of workload: podCount pods (1 when 0),
// each requesting request CPUs, and optionally a topology request.
type Template struct {
	ClassName     string `json:"className"`
	RuntimeMs     int    `json:"runtimeMs"`
	Priority      int32  `json:"priority"`
	Request       string `json:"request"`
	PodCount      int32  `json:"podCount,omitempty"`
	TASConstraint string `json:"tasConstraint,omitempty"`
	TASLevel      string `json:"tasLevel,omitempty"`
	SliceSize     int32  `json:"sliceSize,omitempty"`
}

// Resolve returns the file of a scenario: a bare name (no slash, no
// extension) is <name>.yaml in dir; anything else is a path.
func Resolve(pathOrName, dir string) string {
	if !strings.ContainsRune(pathOrName, '/') && filepath.Ext(pathOrName) == "" {
		return filepath.Join(dir, pathOrName+".yaml")
	}
	return pathOrName
}

// Name is a scenario's name: its file name without extension.
func Name(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// Load reads and validates the generator configuration in path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes and validates a configuration. Unknown fields are
// rejected, so that a typo does not silently change a scenario.
func Parse(data []byte) (*Config, error) {
	var cfg Config
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &cfg, nil
}

var policies = []string{"", "Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any"}

func (c *Config) validate() error {
	var errs []error
	if len(c.Cohorts) == 0 {
		errs = append(errs, errors.New("cohorts: at least one cohort set is required"))
	}
	errs = append(errs, c.Topology.validate()...)
	errs = append(errs, c.ResourceFlavor.validate()...)
	errs = append(errs, c.validateTopologyFlavor()...)
	for i, cs := range c.Cohorts {
		at := fmt.Sprintf("cohorts[%d]", i)
		if cs.ClassName == "" || cs.Count < 1 {
			errs = append(errs, fmt.Errorf("%s: className and a count >= 1 are required", at))
		}
		for j, qs := range cs.QueuesSets {
			errs = append(errs, qs.validate(fmt.Sprintf("%s.queuesSets[%d]", at, j))...)
		}
	}
	return errors.Join(errs...)
}

func (qs *QueuesSet) validate(at string) []error {
	var errs []error
	if qs.ClassName == "" || qs.Count < 1 {
		errs = append(errs, fmt.Errorf("%s: className and a count >= 1 are required", at))
	}
	if _, err := resource.ParseQuantity(qs.NominalQuota); err != nil {
		errs = append(errs, fmt.Errorf("%s.nominalQuota: %w", at, err))
	}
	if qs.BorrowingLimit != "" {
		if _, err := resource.ParseQuantity(qs.BorrowingLimit); err != nil {
			errs = append(errs, fmt.Errorf("%s.borrowingLimit: %w", at, err))
		}
	}
	for field, p := range map[string]string{"reclaimWithinCohort": qs.ReclaimWithinCohort, "withinClusterQueue": qs.WithinClusterQueue} {
		if !slices.Contains(policies, p) {
			errs = append(errs, fmt.Errorf("%s.%s: unknown policy %q", at, field, p))
		}
	}
	for k, ws := range qs.WorkloadsSets {
		wat := fmt.Sprintf("%s.workloadsSets[%d]", at, k)
		if ws.Count < 0 || ws.CreationIntervalMs < 0 || len(ws.Workloads) == 0 {
			errs = append(errs, fmt.Errorf("%s: count and creationIntervalMs must be >= 0 and workloads non-empty", wat))
		}
		for l, t := range ws.Workloads {
			tat := fmt.Sprintf("%s.workloads[%d]", wat, l)
			if t.ClassName == "" || t.RuntimeMs < 0 {
				errs = append(errs, fmt.Errorf("%s: className is required and runtimeMs must be >= 0", tat))
			}
			if q, err := resource.ParseQuantity(t.Request); err != nil || q.Sign() <= 0 {
				errs = append(errs, fmt.Errorf("%s.request: %q is not a positive quantity", tat, t.Request))
			}
			errs = append(errs, t.validateTopology(tat)...)
		}
	}
	return errs
}

// Queue is one ClusterQueue to create, with its namespace and LocalQueue
// (all three share Name).
type Queue struct {
	Name, Class, Cohort string
	Nominal             resource.Quantity
	BorrowingLimit      *resource.Quantity
	ReclaimWithinCohort string
	WithinClusterQueue  string
}

// Workload is one workload to create.
type Workload struct {
	// Name is unique within Queue's namespace.
	Name, Queue, Class string
	Due                time.Duration
	Runtime            time.Duration
	Priority           int32
	// Request is each pod's CPU request, PodCount the pods (0: one, Pods).
	Request  resource.Quantity
	PodCount int32
	// Topology is the pods' topology request (nil: none).
	Topology *kueue.PodSetTopologyRequest
}

// Pods is how many pods the workload has: PodCount, and 1 when unset.
func (w Workload) Pods() int32 { return max(1, w.PodCount) }

// TotalMilli is the CPU the workload asks for, in millicores.
func (w Workload) TotalMilli() int64 { return int64(w.Pods()) * w.Request.MilliValue() }

// Plan is a configuration expanded into objects.
type Plan struct {
	Cohorts []string
	Queues  []Queue
	// Workloads are ordered by Due.
	Workloads []Workload
	// Flavor is the scenario's own ResourceFlavor (a topology scenario's);
	// nil: the ClusterQueues use a plain flavor the caller names
	// (ResourceFlavor).
	Flavor *kueue.ResourceFlavor
	// Topology and Nodes are a topology scenario's cluster (nil: none).
	Topology *kueue.Topology
	Nodes    []corev1.Node
}

// ResourceFlavor returns a new copy of the flavor the plan's ClusterQueues
// use: the plan's own, or else a plain one named name.
func (p *Plan) ResourceFlavor(name string) *kueue.ResourceFlavor {
	if p.Flavor != nil {
		return p.Flavor.DeepCopy()
	}
	return &kueue.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{ClassLabel: FlavorClass}}}
}

// Expand turns the configuration into a plan.
func (c *Config) Expand() *Plan {
	p := &Plan{Flavor: c.FlavorObject(), Topology: c.TopologyObject(), Nodes: c.NodeObjects()}
	for _, cs := range c.Cohorts {
		for ci := range cs.Count {
			cohort := fmt.Sprintf("%s-%d", cs.ClassName, ci)
			p.Cohorts = append(p.Cohorts, cohort)
			for si, qs := range cs.QueuesSets {
				for qi := range qs.Count {
					q := Queue{Name: fmt.Sprintf("%s-%d-%d-%s", qs.ClassName, si, qi, cohort), Class: qs.ClassName, Cohort: cohort,
						Nominal: resource.MustParse(qs.NominalQuota), ReclaimWithinCohort: qs.ReclaimWithinCohort,
						WithinClusterQueue: qs.WithinClusterQueue}
					if qs.BorrowingLimit != "" {
						bl := resource.MustParse(qs.BorrowingLimit)
						q.BorrowingLimit = &bl
					}
					p.Queues = append(p.Queues, q)
					p.Workloads = append(p.Workloads, expandQueue(q.Name, qs.WorkloadsSets)...)
				}
			}
		}
	}
	slices.SortStableFunc(p.Workloads, func(a, b Workload) int { return int(a.Due - b.Due) })
	return p
}

func expandQueue(queue string, sets []WorkloadsSet) []Workload {
	var out []Workload
	for si, ws := range sets {
		interval := time.Duration(ws.CreationIntervalMs) * time.Millisecond
		k := 0
		for round := range ws.Count {
			for ti, t := range ws.Workloads {
				k++
				out = append(out, Workload{
					Name: fmt.Sprintf("%s-%d-%d-%d", t.ClassName, si, round, ti), Queue: queue, Class: t.ClassName,
					Due: time.Duration(k) * interval, Runtime: time.Duration(t.RuntimeMs) * time.Millisecond,
					Priority: t.Priority, Request: resource.MustParse(t.Request), PodCount: t.PodCount,
					Topology: t.topologyRequest(),
				})
			}
		}
	}
	return out
}

// WorkloadClasses lists the workload class names in order of appearance.
func (c *Config) WorkloadClasses() []string {
	var out []string
	for _, cs := range c.Cohorts {
		for _, qs := range cs.QueuesSets {
			for _, ws := range qs.WorkloadsSets {
				for _, t := range ws.Workloads {
					if !slices.Contains(out, t.ClassName) {
						out = append(out, t.ClassName)
					}
				}
			}
		}
	}
	return out
}
