package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoRootHoldsKuotaModule(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if !isKuotaModule(filepath.Join(root, "go.mod")) {
		t.Errorf("%s/go.mod does not declare %s", root, ModulePath)
	}
}

func TestSharedDirOverride(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv(SharedDirEnv, missing)
	_, err := SharedDir()
	if err == nil || !strings.Contains(err.Error(), SharedDirEnv) {
		t.Fatalf("want an error naming %s for a missing folder, got %v", SharedDirEnv, err)
	}
	if err := os.MkdirAll(missing, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := SharedDir()
	if err != nil || got != missing {
		t.Errorf("SharedDir() = %q, %v; want %q", got, err, missing)
	}
}

func TestToolsBinOverrideMustBeAFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ToolsBinEnv, file)
	if _, err := ToolsBin(); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("want a 'not a folder' error, got %v", err)
	}
}
