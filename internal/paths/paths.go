// Package paths locates the repository, the shared reference data beside
// it and the cached tool binaries: what the tests and the benchmark
// harness need to find on a developer's machine or in CI.
package paths

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	// ModulePath is the Go module path of the repository.
	ModulePath = "github.com/kuota-dev/kuota"
	// SharedDirEnv overrides the location of the shared reference folder.
	SharedDirEnv = "KUOTA_SHARED_DIR"
	// ToolsBinEnv overrides the location of the cached tool binaries.
	ToolsBinEnv = "KUOTA_TOOLS_BIN"
)

// RepoRoot walks up from the working directory to the folder whose go.mod
// declares Kuota's module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("getting working directory: %w", err)
	}
	for {
		if isKuotaModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod declaring " + ModulePath + " above the working directory")
		}
		dir = parent
	}
}

func isKuotaModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == ModulePath
		}
	}
	return false
}

// SharedDir returns the folder with the shared reference data (Kueue's CRDs and
// examples): $KUOTA_SHARED_DIR when set, else ../shared beside the checkout.
func SharedDir() (string, error) {
	if dir := os.Getenv(SharedDirEnv); dir != "" {
		return checkDir(dir, SharedDirEnv)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return checkDir(filepath.Join(root, "..", "shared"), "the shared folder beside the checkout (set KUOTA_SHARED_DIR to override)")
}

// ToolsBin returns the folder of the cached control-plane binaries:
// $KUOTA_TOOLS_BIN when set, else .cache/bin in the repository.
func ToolsBin() (string, error) {
	if dir := os.Getenv(ToolsBinEnv); dir != "" {
		return checkDir(dir, ToolsBinEnv)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return checkDir(filepath.Join(root, ".cache", "bin"), "the tools folder (run 'make tools' to build it)")
}

func checkDir(dir, what string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("%s: %s is not a folder", what, abs)
	}
	return abs, nil
}

// ModuleDir is the folder of a Go module Kuota builds with, at the version
// go.mod selects, in the module cache: where the tests find third-party
// CRDs, never copied into the repository. The module is downloaded when
// the cache does not hold it yet (a module whose packages no build
// compiles, such as the Trainer's, is not fetched by `go build`).
func ModuleDir(module string) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jsonErr := json.Unmarshal(out, &info); jsonErr == nil && info.Error != "" {
		return "", fmt.Errorf("downloading the module %s: %s", module, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("downloading the module %s: %w: %s", module, err, strings.TrimSpace(stderr.String()))
	}
	if info.Dir == "" {
		return "", fmt.Errorf("the module %s has no folder in the module cache", module)
	}
	return info.Dir, nil
}
