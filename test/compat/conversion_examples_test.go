package compat

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/conversion"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// v1beta2OnlyFields are the fields Kuota's v1beta1 keeps so that a v1beta1
// update loses nothing, and that Kueue's v1beta1 schema does not have.
var v1beta2OnlyFields = []string{"spec.concurrentAdmissionPolicy", "spec.preemptionGates", "status.preemptionGates"}

type crdVersion struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
}

func loadCRDVersion(t *testing.T, file, version string) crdVersion {
	t.Helper()
	internal := crdSchema(t, file, version)
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		t.Fatal(err)
	}
	val, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		t.Fatal(err)
	}
	return crdVersion{structural: s, validator: val}
}

// crdSchema reads the schema of one version of a CRD file.
func crdSchema(t *testing.T, file, version string) *apiextensions.JSONSchemaProps {
	t.Helper()
	crd, err := cachedCRD(file)
	if err != nil {
		t.Fatal(err)
	}
	v, err := FindVersion(crd, version)
	if err != nil {
		t.Fatal(err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	return &internal
}

// TestKueueExamplesConvertToKueuesV1beta1: every ClusterQueue, LocalQueue,
// Cohort, Workload and MultiKueueCluster of Kueue's examples, defaulted as
// the API server stores it, converts to an object that Kueue's own v1beta1
// schema accepts (only the fields v1beta1 keeps for v1beta2 are unknown to
// it) and back to the same object.
func TestKueueExamplesConvertToKueuesV1beta1(t *testing.T) {
	var kinds []string
	for _, k := range conversion.Kinds {
		kinds = append(kinds, k)
	}
	var objs []map[string]any
	var from []string
	for _, e := range testutil.KueueExamples(t, kueue.GroupVersion.Group, func(kind string) bool { return slices.Contains(kinds, kind) }) {
		if e.Obj.GetAPIVersion() == kueue.GroupVersion.String() {
			objs, from = append(objs, e.Obj.Object), append(from, e.File)
		}
	}
	if len(objs) < 10 {
		t.Fatalf("found %d objects of %v in Kueue's examples; the test would check too little", len(objs), kinds)
	}
	plurals := map[string]string{}
	for plural, kind := range conversion.Kinds {
		plurals[kind] = plural
	}
	for i, obj := range objs {
		kind, name := obj["kind"].(string), obj["metadata"].(map[string]any)["name"]
		plural := plurals[kind]
		ours := loadCRDVersion(t, filepath.Join(ourDir(t), CRDFileName(plural)), "v1beta2")
		kueues := loadCRDVersion(t, filepath.Join(referenceDir(t), CRDFileName(plural)), "v1beta1")
		structuraldefaulting.Default(obj, ours.structural)
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		down, err := conversion.Convert(raw, "kueue.x-k8s.io/v1beta1")
		if err != nil {
			t.Errorf("%s: %s %v: %v", from[i], kind, name, err)
			continue
		}
		var old map[string]any
		if err := json.Unmarshal(down, &old); err != nil {
			t.Fatal(err)
		}
		pruned := pruning.PruneWithOptions(old, kueues.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		for _, p := range pruned {
			if !slices.ContainsFunc(v1beta2OnlyFields, func(f string) bool { return strings.HasPrefix(p, f) }) {
				t.Errorf("%s: %s %v in v1beta1 has %s, which Kueue's v1beta1 does not know", from[i], kind, name, p)
			}
		}
		if errs := validation.ValidateCustomResource(field.NewPath(""), old, kueues.validator); len(errs) > 0 {
			t.Errorf("%s: %s %v in v1beta1 is refused by Kueue's v1beta1 schema: %v", from[i], kind, name, errs)
		}
		up, err := conversion.Convert(down, "kueue.x-k8s.io/v1beta2")
		if err != nil {
			t.Fatalf("%s: back up: %v", from[i], err)
		}
		want, back := typedOf(t, kind, raw), typedOf(t, kind, up)
		if !equality.Semantic.DeepEqual(want, back) {
			t.Errorf("%s: %s %v changed on the way v1beta2 -> v1beta1 -> v1beta2:\nwant %s\ngot  %s", from[i], kind, name, raw, up)
		}
	}
	t.Logf("%d objects of Kueue's examples converted both ways", len(objs))
}

// typedOf decodes a v1beta2 object of kind into its Go type, so that
// equal values compare equal (a quantity 9 and "9").
func typedOf(t *testing.T, kind string, raw []byte) any {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	out, err := scheme.New(kueue.GroupVersion.WithKind(kind))
	if err != nil {
		t.Fatalf("no Go type for %s: %v", kind, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}
