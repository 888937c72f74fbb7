package validation

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// exampleValidators validate a decoded example object of each kind this
// package checks.
var exampleValidators = map[string]func([]byte) (field.ErrorList, error){
	"ResourceFlavor": validateJSON(ValidateResourceFlavor),
	"ClusterQueue":   validateJSON(ValidateClusterQueue),
	"Cohort":         validateJSON(ValidateCohort),
	"Workload":       validateJSON(ValidateWorkload),
}

func validateJSON[T any](validate func(*T) field.ErrorList) func([]byte) (field.ErrorList, error) {
	return func(data []byte) (field.ErrorList, error) {
		obj := new(T)
		if err := json.Unmarshal(data, obj); err != nil {
			return nil, err
		}
		return validate(obj), nil
	}
}

// exampleObject is one kueue.x-k8s.io object of Kueue's examples.
type exampleObject struct {
	file, kind, name string
	data             []byte
}

// kueueExamples reads every kueue.x-k8s.io object of the kinds above from
// the YAML files of Kueue's examples (in the shared folder beside the
// checkout; they are not copied into the repository).
func kueueExamples(t *testing.T) []exampleObject {
	t.Helper()
	shared, err := testutil.SharedDir()
	if err != nil {
		t.Fatalf("locating Kueue's examples: %v", err)
	}
	root := filepath.Join(shared, "compat", "examples")
	var out []exampleObject
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		objs, err := decodeDocuments(data)
		if err != nil {
			t.Logf("skipping %s: not plain YAML objects: %v", rel, err)
			return nil
		}
		for _, u := range objs {
			if u.GroupVersionKind().Group != kueue.GroupVersion.Group || exampleValidators[u.GetKind()] == nil {
				continue
			}
			raw, err := u.MarshalJSON()
			if err != nil {
				return err
			}
			out = append(out, exampleObject{file: rel, kind: u.GetKind(), name: u.GetName(), data: raw})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

func decodeDocuments(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// TestKueueExamplesAreValid: users' existing manifests must pass.
func TestKueueExamplesAreValid(t *testing.T) {
	examples := kueueExamples(t)
	if len(examples) < 30 {
		t.Fatalf("found only %d ResourceFlavor/ClusterQueue/Cohort/Workload objects in the examples; the reference data looks incomplete", len(examples))
	}
	for _, ex := range examples {
		errs, err := exampleValidators[ex.kind](ex.data)
		if err != nil {
			t.Errorf("%s: %s %s does not decode: %v", ex.file, ex.kind, ex.name, err)
			continue
		}
		if len(errs) > 0 {
			t.Errorf("%s: %s %s rejected: %v", ex.file, ex.kind, ex.name, errs.ToAggregate())
		}
	}
	t.Logf("validated %d example objects", len(examples))
}
