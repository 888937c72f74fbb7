package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestSelfCompare: every reference CRD compared with itself has no
// differences, and the walk visits every schema node (counted independently
// from the raw YAML) plus the CRD-level nodes.
func TestSelfCompare(t *testing.T) {
	minPaths := map[string]int{"clusterqueues": 80, "workloads": 1000}
	mustHave := map[string][]string{
		"clusterqueues":   {".spec.resourceGroups[].flavors[].resources[].nominalQuota", CRDPath, PrinterColumnPath("Cohort")},
		"resourceflavors": {".spec.nodeLabels{}", ".spec.tolerations[].effect"},
		"workloads":       {".spec.podSets[].template.spec.containers[].resources.limits{}"},
	}
	refDir := referenceDir(t)
	for _, plural := range plurals {
		t.Run(plural, func(t *testing.T) {
			crd := referenceCRD(t, plural)
			a, b := flatten(t, crd), flatten(t, crd.DeepCopy())
			rep := Compare(a, b)
			if !rep.Clean() || len(rep.Extra) > 0 {
				t.Errorf("self-compare found differences:\n%s", rep)
			}
			if want := max(minPaths[plural], 5); a.Len() < want {
				t.Errorf("only %d paths, want at least %d", a.Len(), want)
			}
			v, err := FindVersion(crd, Version)
			if err != nil {
				t.Fatal(err)
			}
			raw := rawSchemaNodes(t, filepath.Join(refDir, CRDFileName(plural)))
			if want := raw + 1 + len(v.AdditionalPrinterColumns); a.Len() != want {
				t.Errorf("%d paths, want %d (%d schema nodes in the YAML + crd + %d printer columns)",
					a.Len(), want, raw, len(v.AdditionalPrinterColumns))
			}
			for _, p := range mustHave[plural] {
				if _, ok := a.Nodes[p]; !ok {
					t.Errorf("path %s not found", p)
				}
			}
		})
	}
}

// rawSchemaNodes counts the v1beta2 schema nodes of a CRD file by walking the
// untyped YAML, independently of Flatten.
func rawSchemaNodes(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	spec, _ := doc["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["name"] != Version {
			continue
		}
		schema, _ := vm["schema"].(map[string]any)
		return countNodes(schema["openAPIV3Schema"])
	}
	t.Fatalf("%s: no version %s", file, Version)
	return 0
}

func countNodes(node any) int {
	m, ok := node.(map[string]any)
	if !ok {
		return 0
	}
	n := 1
	props, _ := m["properties"].(map[string]any)
	for _, p := range props {
		n += countNodes(p)
	}
	return n + countNodes(m["items"]) + countNodes(m["additionalProperties"])
}

// TestKnownFacts spot-checks facts of well-known reference nodes.
func TestKnownFacts(t *testing.T) {
	cq := flatten(t, referenceCRD(t, "clusterqueues"))
	wl := flatten(t, referenceCRD(t, "workloads"))
	intOrString := `[{"type":"integer"},{"type":"string"}]`
	for _, tc := range []struct {
		snap             *Snapshot
		path, fact, want string
	}{
		{cq, ".spec.resourceGroups[].flavors[].resources[].nominalQuota", "anyOf", intOrString},
		{cq, ".spec.resourceGroups[].flavors[].resources[].nominalQuota", "x-kubernetes-int-or-string", "true"},
		{cq, ".spec.queueingStrategy", "enum", `["BestEffortFIFO","StrictFIFO"]`},
		{cq, ".spec.queueingStrategy", "default", `"BestEffortFIFO"`},
		{cq, ".spec.resourceGroups", "maxItems", "16"},
		{cq, ".spec.namespaceSelector", "x-kubernetes-map-type", "atomic"},
		{cq, ".status.pendingWorkloads", "format", "int32"},
		{cq, CRDPath, "scope", "Cluster"},
		{cq, CRDPath, "shortNames", `["cq"]`},
		{cq, CRDPath, "subresources.status", "true"},
		{cq, PrinterColumnPath("Strategy"), "priority", "1"},
		{wl, CRDPath, "selectableFields", `[".status.admission.clusterQueue"]`},
		{wl, ".spec.podSets[].template.spec.containers[].resources.limits{}", "anyOf", intOrString},
	} {
		if got := tc.snap.Nodes[tc.path].Facts[tc.fact]; got != tc.want {
			t.Errorf("%s %s %s = %q, want %q", tc.snap.CRD, tc.path, tc.fact, got, tc.want)
		}
	}
}

// editSchema applies fn to the v1beta2 schema node reached from the
// openAPIV3Schema root through segs: "[]" steps into items, "{}" into
// additionalProperties, anything else into the named property.
func editSchema(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, fn func(*apiextensionsv1.JSONSchemaProps), segs ...string) {
	t.Helper()
	v, err := FindVersion(crd, Version)
	if err != nil {
		t.Fatal(err)
	}
	if err := editAt(v.Schema.OpenAPIV3Schema, segs, fn); err != nil {
		t.Fatalf("editing %v: %v", segs, err)
	}
}

func editAt(s *apiextensionsv1.JSONSchemaProps, segs []string, fn func(*apiextensionsv1.JSONSchemaProps)) error {
	if len(segs) == 0 {
		fn(s)
		return nil
	}
	switch seg := segs[0]; {
	case seg == "[]" && s.Items != nil && s.Items.Schema != nil:
		return editAt(s.Items.Schema, segs[1:], fn)
	case seg == "{}" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return editAt(s.AdditionalProperties.Schema, segs[1:], fn)
	default:
		p, ok := s.Properties[seg]
		if !ok {
			return fmt.Errorf("no property %q", seg)
		}
		err := editAt(&p, segs[1:], fn)
		s.Properties[seg] = p
		return err
	}
}

func deleteProperty(name string) func(*apiextensionsv1.JSONSchemaProps) {
	return func(s *apiextensionsv1.JSONSchemaProps) { delete(s.Properties, name) }
}

func rawJSON(vals ...string) []apiextensionsv1.JSON {
	out := make([]apiextensionsv1.JSON, 0, len(vals))
	for _, v := range vals {
		out = append(out, apiextensionsv1.JSON{Raw: []byte(v)})
	}
	return out
}

// diff is the expected outcome of a mutation: missing and extra paths, and
// mismatches as "path fact" strings.
type diff struct {
	missing, mismatched, extra []string
}

func mismatchKeys(ms []Mismatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Path+" "+m.Fact)
	}
	return out
}
