package compat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	mod, err := moduleOf(filepath.Join(root, "go.mod"))
	if err != nil || mod != ModulePath {
		t.Errorf("module of %s = %q, %v; want %s", root, mod, err, ModulePath)
	}
}

func TestReferenceCRDDirOverride(t *testing.T) {
	shared := t.TempDir()
	t.Setenv(SharedDirEnv, shared)
	want := filepath.Join(shared, "compat", "crds")

	_, err := ReferenceCRDDir()
	if err == nil {
		t.Fatal("ReferenceCRDDir succeeded on an empty shared folder")
	}
	for _, s := range []string{want, SharedDirEnv} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}

	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ReferenceCRDDir()
	if err != nil || got != want {
		t.Errorf("ReferenceCRDDir() = %q, %v; want %q", got, err, want)
	}
}
