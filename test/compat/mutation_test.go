package compat

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

type schemaEdit = func(*apiextensionsv1.JSONSchemaProps)

type mutationCase struct {
	name   string
	plural string
	mutate func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition)
	want   diff
}

// onSchema builds a mutation that edits one schema node.
func onSchema(fn schemaEdit, segs ...string) func(*testing.T, *apiextensionsv1.CustomResourceDefinition) {
	return func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
		t.Helper()
		editSchema(t, crd, fn, segs...)
	}
}

// onVersion builds a mutation of the v1beta2 version entry.
func onVersion(fn func(*apiextensionsv1.CustomResourceDefinitionVersion)) func(*testing.T, *apiextensionsv1.CustomResourceDefinition) {
	return func(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
		t.Helper()
		v, err := FindVersion(crd, Version)
		if err != nil {
			t.Fatal(err)
		}
		fn(v)
	}
}

var schemaMutations = []mutationCase{
	{
		name: "delete property", plural: "clusterqueues",
		mutate: onSchema(deleteProperty("cohortName"), "spec"),
		want:   diff{missing: []string{".spec.cohortName"}},
	},
	{
		name: "delete subtree reports only its top", plural: "clusterqueues",
		mutate: onSchema(deleteProperty("flavors"), "spec", "resourceGroups", "[]"),
		want:   diff{missing: []string{".spec.resourceGroups[].flavors"}},
	},
	{
		name: "change enum", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) { s.Enum = rawJSON(`"BestEffortFIFO"`) }, "spec", "queueingStrategy"),
		want:   diff{mismatched: []string{".spec.queueingStrategy enum"}},
	},
	{
		name: "reorder enum is no difference", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) { slices.Reverse(s.Enum) }, "spec", "queueingStrategy"),
	},
	{
		name: "change type", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) { s.Type = "string" }, "status", "pendingWorkloads"),
		want:   diff{mismatched: []string{".status.pendingWorkloads type"}},
	},
	{
		name: "change default", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) {
			s.Default = &apiextensionsv1.JSON{Raw: []byte(`"Hold"`)}
		}, "spec", "stopPolicy"),
		want: diff{mismatched: []string{".spec.stopPolicy default"}},
	},
	{
		name: "change anyOf of int-or-string", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) { s.AnyOf[0].Type = "number" },
			"spec", "resourceGroups", "[]", "flavors", "[]", "resources", "[]", "nominalQuota"),
		want: diff{mismatched: []string{".spec.resourceGroups[].flavors[].resources[].nominalQuota anyOf"}},
	},
	{
		name: "reorder anyOf is no difference", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) { slices.Reverse(s.AnyOf) },
			"spec", "resourceGroups", "[]", "flavors", "[]", "resources", "[]", "nominalQuota"),
	},
	{
		name: "drop CEL rule", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) { s.XValidations = s.XValidations[1:] }, "spec"),
		want:   diff{mismatched: []string{".spec x-kubernetes-validations"}},
	},
	{
		name: "rewrite CEL rule text and descriptions is no difference", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) {
			s.XValidations[0].Rule = "true"
			s.Description = "changed"
		}, "spec"),
	},
	{
		name: "change list type", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) {
			set := "set"
			s.XListType = &set
		}, "spec", "resourceGroups"),
		want: diff{mismatched: []string{".spec.resourceGroups x-kubernetes-list-type"}},
	},
	{
		name: "change additionalProperties value", plural: "resourceflavors",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) {
			n := int64(7)
			s.MaxLength = &n
		}, "spec", "nodeLabels", "{}"),
		want: diff{mismatched: []string{".spec.nodeLabels{} maxLength"}},
	},
	{
		name: "add property is extra", plural: "clusterqueues",
		mutate: onSchema(func(s *apiextensionsv1.JSONSchemaProps) {
			s.Properties["newField"] = apiextensionsv1.JSONSchemaProps{
				Type:       "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"x": {Type: "string"}},
			}
		}, "spec"),
		want: diff{extra: []string{".spec.newField"}},
	},
}

var crdMutations = []mutationCase{
	{
		name: "drop printer column", plural: "clusterqueues",
		mutate: onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) {
			v.AdditionalPrinterColumns = slices.DeleteFunc(v.AdditionalPrinterColumns,
				func(c apiextensionsv1.CustomResourceColumnDefinition) bool { return c.Name == "Cohort" })
		}),
		want: diff{
			missing:    []string{PrinterColumnPath("Cohort")},
			mismatched: []string{CRDPath + " printerColumnOrder"},
		},
	},
	{
		name: "change printer column jsonPath", plural: "clusterqueues",
		mutate: onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) {
			v.AdditionalPrinterColumns[0].JSONPath = ".spec.other"
			v.AdditionalPrinterColumns[0].Description = "ignored"
		}),
		want: diff{mismatched: []string{PrinterColumnPath("Cohort") + " jsonPath"}},
	},
	{
		name: "change scope", plural: "clusterqueues",
		mutate: func(_ *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Scope = apiextensionsv1.NamespaceScoped
		},
		want: diff{mismatched: []string{CRDPath + " scope"}},
	},
	{
		name: "change shortName", plural: "clusterqueues",
		mutate: func(_ *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Names.ShortNames = []string{"cqs"}
		},
		want: diff{mismatched: []string{CRDPath + " shortNames"}},
	},
	{
		name: "drop status subresource", plural: "clusterqueues",
		mutate: onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.Subresources = nil }),
		want:   diff{mismatched: []string{CRDPath + " subresources.status"}},
	},
	{
		name: "not served", plural: "workloads",
		mutate: onVersion(func(v *apiextensionsv1.CustomResourceDefinitionVersion) { v.Served = false }),
		want:   diff{mismatched: []string{CRDPath + " served"}},
	},
	{
		name: "other version removed is no difference", plural: "workloads",
		mutate: func(_ *testing.T, crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Versions = slices.DeleteFunc(crd.Spec.Versions,
				func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name != Version })
		},
	},
}

// TestMutationsDetected mutates a copy of a reference CRD and checks that
// Compare reports exactly the expected differences.
func TestMutationsDetected(t *testing.T) {
	for _, tc := range append(slices.Clone(schemaMutations), crdMutations...) {
		t.Run(tc.name, func(t *testing.T) {
			ref := referenceCRD(t, tc.plural)
			ours := ref.DeepCopy()
			tc.mutate(t, ours)
			rep := Compare(flatten(t, ref), flatten(t, ours))
			if !slices.Equal(rep.Missing, tc.want.missing) {
				t.Errorf("Missing = %q, want %q", rep.Missing, tc.want.missing)
			}
			if got := mismatchKeys(rep.Mismatched); !slices.Equal(got, tc.want.mismatched) {
				t.Errorf("Mismatched = %q, want %q", got, tc.want.mismatched)
			}
			if !slices.Equal(rep.Extra, tc.want.extra) {
				t.Errorf("Extra = %q, want %q", rep.Extra, tc.want.extra)
			}
			if t.Failed() {
				t.Logf("report:\n%s", rep)
			}
		})
	}
}

// TestMismatchValues checks Want/Got of a few mismatches in detail.
func TestMismatchValues(t *testing.T) {
	ref := referenceCRD(t, "clusterqueues")
	ours := ref.DeepCopy()
	editSchema(t, ours, func(s *apiextensionsv1.JSONSchemaProps) {
		s.Enum = rawJSON(`"StrictFIFO"`)
		s.Default = nil
	}, "spec", "queueingStrategy")
	ours.Spec.Names.ShortNames = []string{"b", "a"}
	rep := Compare(flatten(t, ref), flatten(t, ours))
	want := []Mismatch{
		{Path: ".spec.queueingStrategy", Fact: "default", Want: `"BestEffortFIFO"`, Got: Unset},
		{Path: ".spec.queueingStrategy", Fact: "enum", Want: `["BestEffortFIFO","StrictFIFO"]`, Got: `["StrictFIFO"]`},
		{Path: CRDPath, Fact: "shortNames", Want: `["cq"]`, Got: `["a","b"]`},
	}
	slices.SortFunc(want, func(a, b Mismatch) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		return strings.Compare(a.Fact, b.Fact)
	})
	if !slices.Equal(rep.Mismatched, want) {
		t.Errorf("Mismatched =\n%v\nwant\n%v", rep.Mismatched, want)
	}
}
