package compat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	awv1beta2 "github.com/project-codeflare/appwrapper/api/v1beta2"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

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
		"sample-job.yaml":                 {{"main", 3}},
		"sample-pytorchjob.yaml":          {{"master", 1}, {"worker", 1}},
		"sample-tfjob.yaml":               {{"ps", 1}, {"worker", 2}},
		"sample-xgboostjob.yaml":          {{"master", 1}, {"worker", 2}},
		"sample-paddlejob.yaml":           {{"worker", 2}},
		"sample-jaxjob.yaml":              {{"worker", 2}},
		"sample-mpijob.yaml":              {{"launcher", 1}, {"worker", 2}},
		"sample-jobset.yaml":              {{"workers", 1}, {"driver", 1}},
		"sample-jobset-tas-required.yaml": {{"workers", 4}},
		// AppWrappers: one PodSet per pod set of the components, named
		// "<AppWrapper name>-<index>".
		"../appwrapper/pytorch-sample.yaml":         {{"sample-appwrapper-pytorch-job-0", 1}, {"sample-appwrapper-pytorch-job-1", 1}},
		"../appwrapper/deployment-sample.yaml":      {{"sample-appwrapper-deployment-0", 3}},
		"../appwrapper/leaderworkerset-sample.yaml": {{"sample-appwrapper-lws-0", 2}, {"sample-appwrapper-lws-1", 3}},
		"sample-sparkapplication.yaml":              {{"driver", 1}, {"executor", 2}},
		// RayJobs: head, the worker groups, and the submitter Job's pod.
		"ray-job-sample.yaml":             {{"head", 1}, {"small-group", 1}, {"submitter", 1}},
		"ray-job-autoscaling-sample.yaml": {{"head", 1}, {"small-group", 1}, {"submitter", 1}},
	}
	shared, err := paths.SharedDir()
	if err != nil {
		t.Fatal(err)
	}
	scheme, err := app.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range cases {
		t.Run(file, func(t *testing.T) {
			obj := decodeExample(t, scheme, filepath.Join(shared, "compat", "examples", "jobs", file))
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
			admitted := admittedSelectors(t, job)
			wantAdmitted := len(podSets)
			if defaultSubmitter(job) {
				wantAdmitted--
			}
			if len(admitted) != wantAdmitted {
				t.Errorf("%d PodSets carry the admission, want %d", len(admitted), wantAdmitted)
			}
			for name, sel := range admitted {
				if sel["pool"] != "a" {
					t.Errorf("PodSet %s: node selector %v after the admission, want pool=a", name, sel)
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
			for name, sel := range admittedSelectors(t, job) {
				if _, ok := sel["pool"]; ok {
					t.Errorf("PodSet %s keeps the flavor's node selector after restoring", name)
				}
			}
		})
	}
}

// admittedSelectors is the node selector each PodSet's pods get: their
// template's, or, for an AppWrapper (whose templates never change), the
// one its controller is told to merge (spec.components[].podSetInfos).
func admittedSelectors(t *testing.T, job jobframework.Job) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	if aw, ok := job.Object().(*awv1beta2.AppWrapper); ok {
		for i, c := range aw.Spec.Components {
			for k, info := range c.PodSetInfos {
				out[fmt.Sprintf("component %d pod set %d", i, k)] = info.NodeSelector
			}
		}
		return out
	}
	podSets, err := job.PodSets()
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range podSets {
		if ps.Name == "submitter" && defaultSubmitter(job) {
			continue
		}
		out[string(ps.Name)] = ps.Template.Spec.NodeSelector
	}
	return out
}

// defaultSubmitter reports a RayJob whose submitter pod is the Ray
// operator's default (no spec.submitterPodTemplate): Kuota counts it but
// has no template to put the admission in (docs/integrations/ray.md).
func defaultSubmitter(job jobframework.Job) bool {
	j, ok := job.Object().(*rayv1.RayJob)
	return ok && j.Spec.SubmitterPodTemplate == nil
}

// decodeExample reads the one job object of an example file as the API
// server would store it: with its CRD's defaults applied (a JobSet's
// replicated job without replicas has 1).
func decodeExample(t *testing.T, scheme *runtime.Scheme, path string) client.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
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
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		gvk := u.GroupVersionKind()
		if src, ok := crdSources[gvk.GroupKind()]; ok {
			applyCRDDefaults(t, src, gvk.Version, u)
		}
		typed, err := scheme.New(gvk)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			t.Fatalf("converting %s: %v", path, err)
		}
		typed.GetObjectKind().SetGroupVersionKind(gvk)
		return typed.(client.Object)
	}
	t.Fatalf("%s holds no object", path)
	return nil
}

// crdSource is where a kind's CRD is, in the Go module Kuota builds with.
type crdSource struct{ module, file string }

var crdSources = map[schema.GroupKind]crdSource{
	{Group: "jobset.x-k8s.io", Kind: "JobSet"}:  {"sigs.k8s.io/jobset", "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"},
	{Group: "kubeflow.org", Kind: "PyTorchJob"}: {"github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_pytorchjobs.yaml"},
	{Group: "kubeflow.org", Kind: "TFJob"}:      {"github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_tfjobs.yaml"},
	{Group: "kubeflow.org", Kind: "XGBoostJob"}: {"github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_xgboostjobs.yaml"},
	{Group: "kubeflow.org", Kind: "PaddleJob"}:  {"github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_paddlejobs.yaml"},
	{Group: "kubeflow.org", Kind: "JAXJob"}:     {"github.com/kubeflow/training-operator", "manifests/base/crds/kubeflow.org_jaxjobs.yaml"},
	{Group: "kubeflow.org", Kind: "MPIJob"}:     {"github.com/kubeflow/mpi-operator", "manifests/base/kubeflow.org_mpijobs.yaml"},
	{Group: "workload.codeflare.dev", Kind: "AppWrapper"}: {"github.com/project-codeflare/appwrapper",
		"config/crd/bases/workload.codeflare.dev_appwrappers.yaml"},
}

// applyCRDDefaults applies the defaults of the CRD's schema for that
// version to u, as the API server does on create.
func applyCRDDefaults(t *testing.T, src crdSource, version string, u *unstructured.Unstructured) {
	t.Helper()
	dir, err := paths.ModuleDir(src.module)
	if err != nil {
		t.Fatal(err)
	}
	structural, err := structuralschema.NewStructural(crdSchema(t, filepath.Join(dir, src.file), version))
	if err != nil {
		t.Fatalf("%s: %v", src.file, err)
	}
	structuraldefaulting.Default(u.Object, structural)
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
