package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/devcluster"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/paths"
	"github.com/kuota-dev/kuota/internal/tas"
)

// The nodes of Kueue's topology-aware example cluster
// (examples/tas/kind-cluster.yaml): blocks b1 and b2, each of racks r1 and
// r2, each of two nodes, in node group tas-group.
const (
	tasGroupLabel = "cloud.provider.com/node-group"
	tasBlockLabel = "cloud.provider.com/topology-block"
	tasRackLabel  = "cloud.provider.com/topology-rack"
)

func tasNodeGroups() []devcluster.NodeGroup {
	var out []devcluster.NodeGroup
	for _, b := range []string{"b1", "b2"} {
		for _, r := range []string{"r1", "r2"} {
			out = append(out, devcluster.NodeGroup{Name: "tas-" + b + r, Count: 2,
				Labels: map[string]string{tasGroupLabel: "tas-group", tasBlockLabel: b, tasRackLabel: r}})
		}
	}
	return out
}

// readExample decodes one of Kueue's example files.
func readExample(t *testing.T, rel string) []*unstructured.Unstructured {
	t.Helper()
	shared, err := paths.SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(shared, "compat", "examples", rel))
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// Kueue's topology-aware examples run unchanged: the queues of
// sample-queues.yaml, then each sample Job. Every Job is admitted with a
// topology assignment, its pods start gated, get their domain's node
// selector from the ungater and run on nodes of the domain the request
// allows: one rack for required, one block where it fits (40 pods do not
// fit in one block of 32 CPUs, so both blocks) for preferred.
func TestKueueTopologyExamples(t *testing.T) {
	applyExample(t, "tas/sample-queues.yaml")
	nodes := nodeLabels(t)
	cases := []struct {
		file string
		// domains says how many distinct values of the label the pods may use.
		label   string
		domains int
	}{
		{"tas/sample-job-required.yaml", tasRackLabel, 1},
		{"tas/sample-job-preferred.yaml", tasBlockLabel, 2},
		{"tas/sample-job-unconstrained.yaml", "", 0},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			objs := readExample(t, c.file)
			var j batchv1.Job
			if err := runtimeFromUnstructured(objs[0], &j); err != nil {
				t.Fatal(err)
			}
			j.Namespace = "default"
			create(t, &j)
			t.Cleanup(func() {
				_ = suite.client.Delete(context.Background(), &j, client.PropagationPolicy("Background"))
			})
			waitComplete(t, j.Namespace, j.Name, 2*time.Minute)
			wl, err := workloadOf(t, getJob(t, j.Namespace, j.Name))
			if err != nil {
				t.Fatal(err)
			}
			if wl.Status.Admission == nil || wl.Status.Admission.PodSetAssignments[0].TopologyAssignment == nil {
				t.Fatalf("admitted without a topology assignment: %+v", wl.Status.Admission)
			}
			doms, err := tas.Domains(wl.Status.Admission.PodSetAssignments[0].TopologyAssignment)
			if err != nil {
				t.Fatal(err)
			}
			assigned := int32(0)
			for _, d := range doms {
				assigned += d.Count
			}
			ps := pods(t, j.Namespace, j.Name)
			if assigned != *j.Spec.Parallelism || len(ps) < int(assigned) {
				t.Fatalf("assignment of %d pods, %d pods, parallelism %d", assigned, len(ps), *j.Spec.Parallelism)
			}
			used := map[string]bool{}
			for _, p := range ps {
				labels := nodes[p.Spec.NodeName]
				if labels[tasGroupLabel] != "tas-group" {
					t.Errorf("pod %s ran on %q, outside the flavor's nodes", p.Name, p.Spec.NodeName)
				}
				if p.Labels[jobframework.TASLabel] != jobframework.TASLabelValue || p.Spec.NodeSelector[corev1.LabelHostname] == "" {
					t.Errorf("pod %s: label %q, node selector %v", p.Name, p.Labels[jobframework.TASLabel], p.Spec.NodeSelector)
				}
				for _, g := range p.Spec.SchedulingGates {
					t.Errorf("pod %s still has gate %s", p.Name, g.Name)
				}
				if c.label != "" {
					used[labels[c.label]] = true
				}
			}
			if c.label != "" && len(used) != c.domains {
				t.Errorf("pods ran in %d values of %s (%v), want %d", len(used), c.label, used, c.domains)
			}
		})
	}
}

// nodeLabels maps the cluster's nodes to their labels.
func nodeLabels(t *testing.T) map[string]map[string]string {
	t.Helper()
	var list corev1.NodeList
	if err := suite.client.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, n := range list.Items {
		out[n.Name] = n.Labels
	}
	return out
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	if u == nil {
		return fmt.Errorf("no object")
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}
