package crds

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kuota-dev/kuota/internal/paths"
)

const kueueGroup = "kueue.x-k8s.io"

// kueueOnlyExamples returns the example files whose every object belongs to
// the kueue.x-k8s.io group, with their decoded objects.
func kueueOnlyExamples(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	shared, err := paths.SharedDir()
	if err != nil {
		t.Fatalf("locating Kueue's examples: %v", err)
	}
	root := filepath.Join(shared, "compat", "examples")
	out := map[string][]*unstructured.Unstructured{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs, err := decodeObjects(data)
		if err != nil {
			t.Logf("skipping %s: not plain YAML objects: %v", path, err)
			return nil
		}
		for _, obj := range objs {
			if obj.GroupVersionKind().Group != kueueGroup {
				return nil
			}
		}
		rel, _ := filepath.Rel(root, path)
		out[rel] = objs
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

// TestKueueExamplesAreAccepted applies, server-side, every example manifest of
// Kueue that holds only kueue.x-k8s.io objects. A user's existing manifests
// must work unchanged.
func TestKueueExamplesAreAccepted(t *testing.T) {
	examples := kueueOnlyExamples(t)
	if len(examples) < 15 {
		t.Fatalf("found only %d kueue-only example files; the reference data looks incomplete", len(examples))
	}
	ctx := context.Background()
	total := 0
	for name, objs := range examples {
		t.Run(name, func(t *testing.T) {
			for _, obj := range objs {
				if isNamespaced(t, obj) {
					if obj.GetNamespace() == "" {
						obj.SetNamespace("default")
					}
					ensureNamespace(ctx, t, obj.GetNamespace())
				}
				if err := serverSideApply(ctx, obj); err != nil {
					t.Errorf("%s rejected: %v", objectKey(obj), err)
				}
			}
			// Objects of different files share names; remove them so that
			// immutable fields of one file do not clash with the next.
			deleteAndWait(ctx, t, objs)
		})
		total += len(objs)
	}
	t.Logf("applied %d objects from %d example files", total, len(examples))
}
