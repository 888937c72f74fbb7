package compat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const (
	// ModulePath is the module whose go.mod marks the repository root.
	ModulePath = "github.com/kuota-dev/kuota"
	// SharedDirEnv overrides the location of the shared folder (the folder
	// that contains compat/crds).
	SharedDirEnv = "KUOTA_SHARED_DIR"
	// Version is the API version under test.
	Version = "v1beta2"
	// Group is the API group under test.
	Group = "kueue.x-k8s.io"
)

// RepoRoot walks up from the working directory to the folder whose go.mod
// declares ModulePath.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting working directory: %w", err)
	}
	for dir := wd; ; {
		mod, err := moduleOf(filepath.Join(dir, "go.mod"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if mod == ModulePath {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod with module %s above %s", ModulePath, wd)
		}
		dir = up
	}
}

// moduleOf returns the module path declared in a go.mod file.
func moduleOf(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", gomod, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading %s: %w", gomod, err)
	}
	return "", nil
}

// ReferenceCRDDir returns the folder holding Kueue's reference CRDs:
// $KUOTA_SHARED_DIR/compat/crds if the variable is set, else
// <repo root>/../shared/compat/crds. It fails if the folder does not exist.
func ReferenceCRDDir() (string, error) {
	shared := os.Getenv(SharedDirEnv)
	how := SharedDirEnv
	if shared == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", fmt.Errorf("locating reference CRDs: %w; set %s to the shared folder", err, SharedDirEnv)
		}
		shared = filepath.Join(filepath.Dir(root), "shared")
		how = "the repository root's sibling folder"
	}
	dir := filepath.Join(shared, "compat", "crds")
	st, err := os.Stat(dir)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", dir)
	}
	if err != nil {
		return "", fmt.Errorf("reference CRDs not found at %s (from %s): %w; "+
			"check out the shared folder beside the repository or set %s=/path/to/shared",
			dir, how, err, SharedDirEnv)
	}
	return dir, nil
}

// OurCRDDir returns <repo root>/config/crd/bases, where controller-gen
// writes Kuota's CRDs. The folder may not exist yet.
func OurCRDDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "config", "crd", "bases"), nil
}

// CRDFileName is the controller-gen file name for a kueue.x-k8s.io plural.
func CRDFileName(plural string) string {
	return Group + "_" + plural + ".yaml"
}
