package compat

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kuota-dev/kuota/internal/paths"
)

const (
	// Version is the API version under test.
	Version = "v1beta2"
	// Group is the API group under test.
	Group = "kueue.x-k8s.io"
)

// ReferenceCRDDir returns the folder holding Kueue's reference CRDs,
// <shared>/compat/crds, and fails if it does not exist.
func ReferenceCRDDir() (string, error) {
	shared, err := paths.SharedDir()
	if err != nil {
		return "", fmt.Errorf("locating Kueue's reference CRDs: %w", err)
	}
	dir := filepath.Join(shared, "compat", "crds")
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("reference CRDs not found at %s: check out the shared folder beside the repository or set %s", dir, paths.SharedDirEnv)
	}
	return dir, nil
}

// OurCRDDir returns <repo root>/config/crd/bases, where controller-gen
// writes Kuota's CRDs. The folder may not exist yet.
func OurCRDDir() (string, error) {
	root, err := paths.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "config", "crd", "bases"), nil
}

// CRDFileName is the controller-gen file name for a kueue.x-k8s.io plural.
func CRDFileName(plural string) string {
	return Group + "_" + plural + ".yaml"
}
