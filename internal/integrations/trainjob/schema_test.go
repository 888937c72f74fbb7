package trainjob

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kuota-dev/kuota/internal/paths"
)

// crdSchema loads a CRD of the trainer module Kuota builds with (from the
// module cache) and returns its v1alpha1 schema.
func crdSchema(t *testing.T, file string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	dir, err := paths.ModuleDir("github.com/kubeflow/trainer/v2")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifests", "base", "crds", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == Version && v.Schema != nil {
			return v.Schema.OpenAPIV3Schema
		}
	}
	t.Fatalf("%s has no %s schema", file, Version)
	return nil
}

// lookup follows path through the schema, into list items where the
// schema has a list; it reports the first missing step.
func lookup(s *apiextensionsv1.JSONSchemaProps, path []string) (*apiextensionsv1.JSONSchemaProps, string) {
	for i, p := range path {
		if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
			s = s.Items.Schema
		}
		next, ok := s.Properties[p]
		if !ok {
			return nil, strings.Join(path[:i+1], ".")
		}
		s = &next
	}
	return s, ""
}

func join(paths ...[]string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, p...)
	}
	return out
}

// Every path Kuota reads or writes exists in the trainer v2.3.0 CRDs, with
// the type the accessor expects.
func TestFieldPathsExistInTheTrainerCRDs(t *testing.T) {
	trainJob := crdSchema(t, "trainer.kubeflow.org_trainjobs.yaml")
	rjPatch := join(runtimePatchesPath, patchReplicatedJobsPath)
	for _, c := range []struct {
		path []string
		typ  string
	}{
		{suspendPath, "boolean"},
		{managedByPath, "string"},
		{statusPath, "object"},
		{runtimeRefNamePath, "string"},
		{runtimeRefKindPath, "string"},
		{runtimeRefGroupPath, "string"},
		{numNodesPath, "integer"},
		{resourcesPerNodePath, "object"},
		{runtimePatchesPath, "array"},
		{join(runtimePatchesPath, patchManagerPath), "string"},
		{join(runtimePatchesPath, patchJobSpecPath), "object"},
		{rjPatch, "array"},
		{join(rjPatch, rjPatchNamePath), "string"},
		{join(rjPatch, rjPatchPodMetaPath, []string{"labels"}), "object"},
		{join(rjPatch, rjPatchPodMetaPath, []string{"annotations"}), "object"},
		{join(rjPatch, rjPatchNodeSelectorPath), "object"},
		{join(rjPatch, rjPatchTolerationsPath), "array"},
		{conditionsPath, "array"},
		{join(conditionsPath, conditionTypePath), "string"},
		{join(conditionsPath, conditionStatusPath), "string"},
		{join(conditionsPath, conditionMessagePath), "string"},
		{jobsStatusPath, "array"},
		{join(jobsStatusPath, jobStatusNamePath), "string"},
		{join(jobsStatusPath, jobStatusReadyPath), "integer"},
		{join(jobsStatusPath, jobStatusSucceededPath), "integer"},
		{join(jobsStatusPath, jobStatusActivePath), "integer"},
	} {
		s, missing := lookup(trainJob, c.path)
		if missing != "" {
			t.Errorf("TrainJob: %s is not in the CRD (missing %s)", dotted(c.path), missing)
			continue
		}
		if s.Type != c.typ {
			t.Errorf("TrainJob: %s is %q in the CRD, Kuota reads %q", dotted(c.path), s.Type, c.typ)
		}
	}
	for _, file := range []string{"trainer.kubeflow.org_trainingruntimes.yaml", "trainer.kubeflow.org_clustertrainingruntimes.yaml"} {
		rt := crdSchema(t, file)
		for _, c := range []struct {
			path []string
			typ  string
		}{
			{runtimeJobSetSpecPath, "object"},
			{join(runtimeJobSetSpecPath, []string{"replicatedJobs", "name"}), "string"},
			{join(runtimeJobSetSpecPath, []string{"replicatedJobs", "replicas"}), "integer"},
			{join(runtimeJobSetSpecPath, []string{"replicatedJobs", "template", "metadata"}), "object"},
			{join(runtimeJobSetSpecPath, []string{"replicatedJobs", "template", "spec", "parallelism"}), "integer"},
			{runtimeMLPolicyPath, "object"},
			{runtimeNumNodesPath, "integer"},
			{runtimeMPIPath, "object"},
			{runtimeRunLauncherAsNodePath, "boolean"},
		} {
			s, missing := lookup(rt, c.path)
			if missing != "" {
				t.Errorf("%s: %s is not in the CRD (missing %s)", file, dotted(c.path), missing)
				continue
			}
			if s.Type != c.typ {
				t.Errorf("%s: %s is %q in the CRD, Kuota reads %q", file, dotted(c.path), s.Type, c.typ)
			}
		}
	}
}

// The check itself fails on a path the CRD does not have (the old
// podTemplateOverrides field of trainer v2.1).
func TestLookupFindsAMissingPath(t *testing.T) {
	if _, missing := lookup(crdSchema(t, "trainer.kubeflow.org_trainjobs.yaml"), []string{"spec", "podTemplateOverrides"}); missing != "spec.podTemplateOverrides" {
		t.Errorf("missing %q, want spec.podTemplateOverrides", missing)
	}
}
