package testutil

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kuota-dev/kuota/internal/paths"
)

// Example is one object of Kueue's example manifests.
type Example struct {
	// File is the manifest's path under compat/examples.
	File string
	Obj  *unstructured.Unstructured
}

// KueueExamples returns the objects of the given group whose kind keep
// accepts, from the YAML files of Kueue's examples (read from the shared
// folder beside the checkout, never copied into the repository). Files that
// are not plain YAML objects are skipped with a log line.
func KueueExamples(t testing.TB, group string, keep func(kind string) bool) []Example {
	t.Helper()
	shared, err := paths.SharedDir()
	if err != nil {
		t.Fatalf("locating Kueue's examples: %v", err)
	}
	root := filepath.Join(shared, "compat", "examples")
	var out []Example
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
			if u.GroupVersionKind().Group == group && keep(u.GetKind()) {
				out = append(out, Example{File: rel, Obj: u})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

// decodeDocuments splits a YAML stream into its non-empty objects.
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
