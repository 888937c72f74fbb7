package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kuota-dev/kuota/internal/paths"
)

// The manager's identity as the install bundle (dist/install.yaml) gives
// it: the ServiceAccount kueue-system/kueue-controller-manager bound to
// the bundle's roles. Tests run managers as that identity so that a verb
// missing from the bundle fails a test, not a user's install.
const (
	ManagerNamespace      = "kueue-system"
	ManagerServiceAccount = "kueue-controller-manager"
)

// BundleDocuments returns the objects of dist/install.yaml whose kind is
// one of kinds.
func BundleDocuments(kinds ...string) ([]*unstructured.Unstructured, error) {
	root, err := paths.RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "dist", "install.yaml"))
	if err != nil {
		return nil, fmt.Errorf("reading the install bundle: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, fmt.Errorf("reading the install bundle: %w", err)
		}
		for _, k := range kinds {
			if u.GetKind() == k {
				out = append(out, u)
			}
		}
	}
	return out, nil
}

// ApplyBundleDocuments applies (server-side) the bundle's objects of the
// given kinds with c.
func ApplyBundleDocuments(ctx context.Context, c client.Client, kinds ...string) error {
	objs, err := BundleDocuments(kinds...)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.Patch(ctx, o, client.Apply, client.FieldOwner("kuota-tests"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying the bundle's %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// AsManager returns cfg impersonating the manager's ServiceAccount.
func AsManager(cfg *rest.Config) *rest.Config {
	return AsServiceAccount(cfg, ManagerNamespace, ManagerServiceAccount)
}

// AsServiceAccount returns cfg impersonating the ServiceAccount ns/name.
func AsServiceAccount(cfg *rest.Config, ns, name string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	return c
}
