package webhook

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

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/testutil"
)

// webhookKinds are the kinds Kuota's webhooks admit.
var webhookKinds = map[string]bool{"ResourceFlavor": true, "ClusterQueue": true, "Cohort": true, "Workload": true}

type example struct {
	file string
	obj  *unstructured.Unstructured
}

// kueueExamples returns every object of the webhooks' kinds in the YAML
// files of Kueue's examples (read from the shared folder beside the
// checkout, never copied into the repository).
func kueueExamples(t *testing.T) []example {
	t.Helper()
	shared, err := testutil.SharedDir()
	if err != nil {
		t.Fatalf("locating Kueue's examples: %v", err)
	}
	root := filepath.Join(shared, "compat", "examples")
	var out []example
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
			if u.GroupVersionKind().Group == kueue.GroupVersion.Group && webhookKinds[u.GetKind()] {
				out = append(out, example{file: rel, obj: u})
			}
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
