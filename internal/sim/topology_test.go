package sim

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/scenario"
)

// twoRacks is a cluster of 2 racks of 2 nodes of 4 CPUs; every workload
// asks for a whole rack (8 pods of one CPU each), well within the quota.
const twoRacks = `
topology:
  name: racks
  levels:
  - {name: rack, count: 2, nodeLabel: example.com/rack}
  - {name: node, count: 2, nodeLabel: kubernetes.io/hostname, capacity: {cpu: "4", memory: 16Gi}}
resourceFlavor: {name: tas-flavor, nodeLabel: tas-node-group, topologyName: racks}
cohorts:
- className: c
  count: 1
  queuesSets:
  - className: q
    count: 1
    nominalQuota: "100"
    workloadsSets:
    - count: 3
      creationIntervalMs: 10
      workloads:
      - {className: rack, runtimeMs: 1000, priority: 1, request: "1", podCount: 8, tasConstraint: required, tasLevel: example.com/rack}
`

func scenarioSetup(t *testing.T, config string) (*Setup, []Workload) {
	t.Helper()
	cfg, err := scenario.Parse([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	return FromScenario(cfg.Expand(), "bench-flavor")
}

// A topology scenario is placed by topology: the first two workloads get a
// rack each at once; the third fits the quota but no rack, and is
// admitted only once the first has finished and freed its rack.
func TestTopologyScenarioPlacesByRack(t *testing.T) {
	setup, trace := scenarioSetup(t, twoRacks)
	if len(setup.Nodes) != 4 || len(setup.Topologies) != 1 || setup.Flavors[0].Name != "tas-flavor" {
		t.Fatalf("setup: %d nodes, %d topologies, flavor %s", len(setup.Nodes), len(setup.Topologies), setup.Flavors[0].Name)
	}
	res, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Summary; s.Finished != 3 || s.Admissions != 3 || s.Evictions != 0 {
		t.Fatalf("summary %+v, want 3 workloads finished, each admitted once", s)
	}
	w := res.Workloads
	for i := range 2 {
		if got := w[i].Admissions[0].Decided - w[i].Arrive; got > 100*time.Millisecond {
			t.Errorf("%s waited %v for a free rack", w[i].Name, got)
		}
	}
	if first, third := w[0].Finished, w[2].Admissions[0].Decided; third < first {
		t.Errorf("%s admitted at %v, before %s finished at %v: three racks' worth on two racks", w[2].Name, third, w[0].Name, first)
	}
}

// Without the topology (the same workloads, no topology requests, a
// plain flavor) the quota alone admits all three at once: the wait above
// is the topology's.
func TestTopologyScenarioWaitIsTheTopologys(t *testing.T) {
	plain := strings.NewReplacer(", tasConstraint: required, tasLevel: example.com/rack", "").Replace(twoRacks)
	plain = plain[strings.Index(plain, "cohorts:"):]
	setup, trace := scenarioSetup(t, plain)
	res, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Workloads[2]; w.Admissions[0].Decided-w.Arrive > 100*time.Millisecond {
		t.Errorf("without topology, %s waited %v", w.Name, w.Admissions[0].Decided-w.Arrive)
	}
}

// kueueTAS is Kueue's topology-aware scenario (configs/tas/generator.yaml
// in its module), reduced: 10 racks of 4 nodes, 2 cohorts of 2
// ClusterQueues, a few workloads of each of its classes.
const kueueTAS = `
topology:
  name: "default-topology"
  levels:
  - {name: block, count: 1, nodeLabel: "cloud.provider.com/topology-block"}
  - {name: rack, count: 10, nodeLabel: "cloud.provider.com/topology-rack"}
  - {name: node, count: 4, nodeLabel: "kubernetes.io/hostname", capacity: {cpu: "96", memory: "256Gi"}}
resourceFlavor: {name: "tas-flavor", nodeLabel: "tas-node-group", topologyName: "default-topology"}
cohorts:
- className: cohort
  count: 2
  queuesSets:
  - className: cq
    count: 2
    nominalQuota: "20"
    borrowingLimit: "100"
    reclaimWithinCohort: Any
    withinClusterQueue: LowerPriority
    workloadsSets:
    - count: 12
      creationIntervalMs: 100
      workloads:
      - {className: small-required-rack, runtimeMs: 200, priority: 50, request: "500m", podCount: 2, tasConstraint: required, tasLevel: "cloud.provider.com/topology-rack"}
      - {className: small-preferred-rack, runtimeMs: 200, priority: 50, request: "500m", podCount: 2, tasConstraint: preferred, tasLevel: "cloud.provider.com/topology-rack"}
      - {className: small-balanced-rack, runtimeMs: 200, priority: 50, request: "500m", podCount: 2, tasConstraint: balanced, tasLevel: "cloud.provider.com/topology-rack", sliceSize: 1}
    - count: 4
      creationIntervalMs: 500
      workloads:
      - {className: medium-required-rack, runtimeMs: 500, priority: 100, request: "1250m", podCount: 4, tasConstraint: required, tasLevel: "cloud.provider.com/topology-rack"}
      - {className: medium-preferred-rack, runtimeMs: 500, priority: 100, request: "1250m", podCount: 4, tasConstraint: preferred, tasLevel: "cloud.provider.com/topology-rack"}
      - {className: medium-balanced-rack, runtimeMs: 500, priority: 100, request: "1250m", podCount: 4, tasConstraint: balanced, tasLevel: "cloud.provider.com/topology-rack", sliceSize: 2}
    - count: 2
      creationIntervalMs: 1200
      workloads:
      - {className: large-required-rack, runtimeMs: 1000, priority: 200, request: "2500m", podCount: 8, tasConstraint: required, tasLevel: "cloud.provider.com/topology-rack"}
      - {className: large-preferred-rack, runtimeMs: 1000, priority: 200, request: "2500m", podCount: 8, tasConstraint: preferred, tasLevel: "cloud.provider.com/topology-rack"}
      - {className: large-balanced-rack, runtimeMs: 1000, priority: 200, request: "2500m", podCount: 8, tasConstraint: balanced, tasLevel: "cloud.provider.com/topology-rack", sliceSize: 4}
`

// Kueue's topology-aware scenario runs to the end: every workload,
// whatever its topology constraint, is admitted and finishes.
func TestKueueTASScenario(t *testing.T) {
	setup, trace := scenarioSetup(t, kueueTAS)
	res, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Workloads != 4*(36+12+6) || s.Finished != s.Workloads || s.Admissions < s.Workloads {
		t.Fatalf("summary %+v, want all %d workloads admitted and finished", s, 4*(36+12+6))
	}
}

// A setup file may describe the cluster of topology-aware flavors:
// Topologies and Nodes read and write back; a node the simulation could
// not use is refused, naming its document.
func TestSetupReadsTopologyAndNodes(t *testing.T) {
	setup, _ := scenarioSetup(t, twoRacks)
	var buf bytes.Buffer
	if err := WriteSetup(&buf, setup); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSetup(&buf)
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", buf.String(), err)
	}
	if len(back.Topologies) != 1 || len(back.Topologies[0].Spec.Levels) != 2 || len(back.Nodes) != 4 ||
		back.Nodes[3].Labels["example.com/rack"] != "rack-1" || back.Nodes[3].Status.Allocatable.Cpu().String() != "4" ||
		back.Flavors[0].Spec.TopologyName == nil {
		t.Fatalf("read back %+v from:\n%s", back, buf.String())
	}

	const queues = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {namespaceSelector: {}}
`
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {conditions: [{type: Ready, status: \"True\"}]}\n", "document 2: node n1: no status.allocatable"},
		{"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"4\"}}\n", "document 2: node n1: no Ready condition"},
		{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\nspec: {levels: []}\n", "document 2: Topology t has no levels"},
	} {
		_, err := ReadSetup(strings.NewReader(queues + "---\n" + tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadSetup(%q) = %v, want %q", tc.doc, err, tc.want)
		}
	}
	ok := queues + "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {example.com/rack: r0}}\n" +
		"status: {allocatable: {cpu: \"4\", pods: \"110\"}, conditions: [{type: Ready, status: \"True\"}]}\n"
	s, err := ReadSetup(strings.NewReader(ok))
	if err != nil || len(s.Nodes) != 1 || s.Nodes[0].Labels["example.com/rack"] != "r0" {
		t.Fatalf("ReadSetup = %+v, %v; want one node", s, err)
	}
}
