package crds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const fieldOwner = "kuota-integration-test"

// decodeObjects splits a multi-document YAML stream into objects, skipping
// empty documents.
func decodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("decoding YAML: %w", err)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
}

// mustDecode decodes a single YAML object or fails the test.
func mustDecode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	objs, err := decodeObjects([]byte(manifest))
	if err != nil || len(objs) != 1 {
		t.Fatalf("test manifest must hold exactly one object (err=%v, got %d)", err, len(objs))
	}
	return objs[0]
}

// isNamespaced reports whether the object's kind is namespaced, as the API
// server's discovery says.
func isNamespaced(t *testing.T, obj *unstructured.Unstructured) bool {
	t.Helper()
	namespaced, err := env.Client.IsObjectNamespaced(obj)
	if err != nil {
		t.Fatalf("looking up scope of %s: %v", obj.GroupVersionKind(), err)
	}
	return namespaced
}

// ensureNamespace creates the namespace if it does not exist.
func ensureNamespace(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.Name = name
	if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

// serverSideApply applies obj with force ownership under the test's field manager.
func serverSideApply(ctx context.Context, obj *unstructured.Unstructured) error {
	return env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
		client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// deleteAndWait deletes the objects and waits until they are gone.
func deleteAndWait(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, obj := range objs {
		for {
			probe := &unstructured.Unstructured{}
			probe.SetGroupVersionKind(obj.GroupVersionKind())
			err := env.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, probe)
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s still present 30s after deletion (err=%v)", obj.GetKind(), obj.GetName(), err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// objectKey describes an object for messages.
func objectKey(obj *unstructured.Unstructured) string {
	parts := []string{obj.GetKind()}
	if ns := obj.GetNamespace(); ns != "" {
		parts = append(parts, ns+"/"+obj.GetName())
	} else {
		parts = append(parts, obj.GetName())
	}
	return strings.Join(parts, " ")
}
