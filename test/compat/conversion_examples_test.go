package compat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
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
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/conversion"
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
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	val, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return crdVersion{structural: s, validator: val}
}

// kueueObjects reads every kueue.x-k8s.io/v1beta2 object of the given
// kinds from Kueue's example manifests, with the file it came from.
func kueueObjects(t *testing.T, kinds []string) (objs []map[string]any, from []string) {
	t.Helper()
	root := filepath.Join(filepath.Dir(referenceDir(t)), "examples")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			var obj map[string]any
			if err := sigsyaml.Unmarshal(doc, &obj); err != nil || obj == nil {
				continue
			}
			if obj["apiVersion"] == "kueue.x-k8s.io/v1beta2" && slices.Contains(kinds, obj["kind"].(string)) {
				objs, from = append(objs, obj), append(from, path)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return objs, from
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
	objs, from := kueueObjects(t, kinds)
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
	var out any
	switch kind {
	case "ClusterQueue":
		out = &kueue.ClusterQueue{}
	case "LocalQueue":
		out = &kueue.LocalQueue{}
	case "Cohort":
		out = &kueue.Cohort{}
	case "Workload":
		out = &kueue.Workload{}
	case "MultiKueueCluster":
		out = &kueue.MultiKueueCluster{}
	default:
		t.Fatalf("no Go type for %s", kind)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}
