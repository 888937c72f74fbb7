package scenario

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"
)

const withTopology = `
topology:
  name: t
  levels:
  - {name: rack, count: 2, nodeLabel: example.com/rack}
  - {name: node, count: 4, nodeLabel: kubernetes.io/hostname, capacity: {cpu: "8", memory: 16Gi}}
resourceFlavor: {name: tas-flavor, nodeLabel: group, topologyName: t}
cohorts:
- className: c
  count: 1
  queuesSets:
  - className: q
    count: 1
    nominalQuota: "20"
    workloadsSets:
    - count: 1
      creationIntervalMs: 100
      workloads:
      - {className: r, runtimeMs: 10, priority: 1, request: 500m, podCount: 4, tasConstraint: required, tasLevel: example.com/rack}
      - {className: p, runtimeMs: 10, priority: 1, request: "1", podCount: 2, tasConstraint: preferred, tasLevel: example.com/rack}
      - {className: b, runtimeMs: 10, priority: 1, request: "1", podCount: 4, tasConstraint: balanced, tasLevel: example.com/rack, sliceSize: 2}
      - {className: plain, runtimeMs: 10, priority: 1, request: "2"}
`

// Kueue's topology-aware generator format is read: pod counts size the
// workloads and their topology requests are carried as Kueue's generator
// writes them.
func TestTopologyScenario(t *testing.T) {
	cfg, err := Parse([]byte(withTopology))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Topology.Name != "t" || len(cfg.Topology.Levels) != 2 || cfg.ResourceFlavor.TopologyName != "t" {
		t.Fatalf("topology %+v, flavor %+v", cfg.Topology, cfg.ResourceFlavor)
	}
	byClass := map[string]Workload{}
	for _, w := range cfg.Expand().Workloads {
		byClass[w.Class] = w
	}
	r, p, b, plain := byClass["r"], byClass["p"], byClass["b"], byClass["plain"]
	if r.TotalMilli() != 2000 || b.TotalMilli() != 4000 || plain.TotalMilli() != 2000 || plain.Pods() != 1 {
		t.Fatalf("total CPU r %d b %d plain %d (pods %d), want 2000, 4000, 2000 (1)", r.TotalMilli(), b.TotalMilli(), plain.TotalMilli(), plain.Pods())
	}
	ps := r.WorkloadObject().Spec.PodSets[0]
	if ps.Count != 4 || ps.TopologyRequest == nil || ptr.Deref(ps.TopologyRequest.Required, "") != "example.com/rack" {
		t.Fatalf("required: pod set %+v", ps)
	}
	if tr := p.WorkloadObject().Spec.PodSets[0].TopologyRequest; tr == nil || ptr.Deref(tr.Preferred, "") != "example.com/rack" {
		t.Fatalf("preferred: %+v", tr)
	}
	if tr := b.WorkloadObject().Spec.PodSets[0].TopologyRequest; tr == nil || ptr.Deref(tr.PodSetSliceRequiredTopology, "") != "example.com/rack" ||
		ptr.Deref(tr.PodSetSliceSize, 0) != 2 {
		t.Fatalf("balanced: %+v", tr)
	}
	if tr := plain.WorkloadObject().Spec.PodSets[0].TopologyRequest; tr != nil {
		t.Fatalf("plain: topology request %+v, want none", tr)
	}
}

func TestTopologyScenarioErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ old, new, field string }{
		{"tasConstraint: required, tasLevel: example.com/rack}", "tasConstraint: nearby, tasLevel: example.com/rack}", "workloads[0].tasConstraint"},
		{"tasConstraint: preferred, tasLevel: example.com/rack}", "tasConstraint: preferred}", "workloads[1].tasLevel"},
		{"podCount: 4, tasConstraint: required", "podCount: -1, tasConstraint: required", "workloads[0].podCount"},
		{"tasLevel: example.com/rack, sliceSize: 2}", "tasLevel: example.com/rack, sliceSize: -2}", "workloads[2].sliceSize"},
		{`capacity: {cpu: "8"`, `capacity: {cpu: "eight"`, "topology.levels[1].capacity.cpu"},
		{"resourceFlavor: {name: tas-flavor,", "resourceFlavor: {", "resourceFlavor.name"},
	} {
		_, err := Parse([]byte(strings.Replace(withTopology, tc.old, tc.new, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming %s", tc.new, err, tc.field)
		}
	}
}
