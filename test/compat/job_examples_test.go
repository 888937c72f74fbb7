package compat

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/internal/app"
	"github.com/kuota-dev/kuota/internal/integrations/all"
	"github.com/kuota-dev/kuota/internal/jobframework"
	"github.com/kuota-dev/kuota/internal/paths"
)

// podSetWant is one PodSet a Kueue example job must become.
type podSetWant struct {
	name  string
	count int32
}

// Kueue's example job manifests, as users have them, become the Workload
// PodSets Kueue gives them (names, order, counts); suspending, admitting
// with a flavor's node selector and restoring work on each.
func TestKueueJobExamplesBecomeTheirPodSets(t *testing.T) {
	cases := map[string][]podSetWant{
		"sample-job.yaml":        {{"main", 3}},
		"sample-pytorchjob.yaml": {{"master", 1}, {"worker", 1}},
		"sample-tfjob.yaml":      {{"ps", 1}, {"worker", 2}},
		"sample-xgboostjob.yaml": {{"master", 1}, {"worker", 2}},
		"sample-paddlejob.yaml":  {{"worker", 2}},
		"sample-jaxjob.yaml":     {{"worker", 2}},
		"sample-mpijob.yaml":     {{"launcher", 1}, {"worker", 2}},
	}
	shared, err := paths.SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme).UniversalDeserializer()
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			obj := decodeExample(t, decoder, filepath.Join(shared, "compat", "examples", "jobs", file))
			in := integrationOf(t, obj)
			job := in.NewJob(obj)
			job.Suspend()
			if !job.IsSuspended() {
				t.Fatal("not suspended after Suspend")
			}
			podSets, err := job.PodSets()
			if err != nil {
				t.Fatalf("PodSets: %v", err)
			}
			var got []podSetWant
			for _, ps := range podSets {
				got = append(got, podSetWant{string(ps.Name), ps.Count})
				if len(ps.Template.Spec.Containers) == 0 {
					t.Errorf("PodSet %s has no containers", ps.Name)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("PodSets %v, want %v", got, want)
			}
			infos := make([]jobframework.PodSetInfo, len(podSets))
			for i, ps := range podSets {
				infos[i] = jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count, NodeSelector: map[string]string{"pool": "a"}}
			}
			if err := job.RunWithPodSetsInfo(infos); err != nil {
				t.Fatalf("RunWithPodSetsInfo: %v", err)
			}
			if job.IsSuspended() {
				t.Fatal("still suspended after the admission")
			}
			admitted, err := job.PodSets()
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range admitted {
				if ps.Template.Spec.NodeSelector["pool"] != "a" {
					t.Errorf("PodSet %s: node selector %v after the admission, want pool=a", ps.Name, ps.Template.Spec.NodeSelector)
				}
			}
			job.Suspend()
			restore := make([]jobframework.PodSetInfo, len(podSets))
			for i, ps := range podSets {
				restore[i] = jobframework.PodSetInfo{Name: ps.Name, Count: ps.Count, NodeSelector: ps.Template.Spec.NodeSelector,
					Tolerations: ps.Template.Spec.Tolerations, Labels: ps.Template.Labels, Annotations: ps.Template.Annotations}
			}
			if !job.RestorePodSetsInfo(restore) {
				t.Error("restoring reported no change")
			}
			restored, _ := job.PodSets()
			for _, ps := range restored {
				if _, ok := ps.Template.Spec.NodeSelector["pool"]; ok {
					t.Errorf("PodSet %s keeps the flavor's node selector after restoring", ps.Name)
				}
			}
		})
	}
}

// decodeExample reads the one job object of an example file.
func decodeExample(t *testing.T, decoder runtime.Decoder, path string) client.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var found client.Object
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		if o, ok := obj.(client.Object); ok && found == nil {
			found = o
		}
	}
	if found == nil {
		t.Fatalf("%s holds no object", path)
	}
	return found
}

// integrationOf is the integration of the object's kind.
func integrationOf(t *testing.T, obj client.Object) jobframework.Integration {
	t.Helper()
	gvk := obj.GetObjectKind().GroupVersionKind()
	for _, in := range all.Integrations() {
		if in.GVK == gvk && in.NewJob != nil {
			return in
		}
	}
	t.Fatalf("no job integration for %s", gvk)
	return jobframework.Integration{}
}
