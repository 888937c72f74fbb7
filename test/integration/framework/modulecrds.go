package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kuota-dev/kuota/internal/paths"
)

// ModuleCRDs names CRD files or folders inside a Go module Kuota builds
// with, relative to the module's root.
type ModuleCRDs struct {
	Module string
	Paths  []string
}

// RunMainWithModuleCRDs is RunMain with third-party CRDs installed, taken
// from the module cache at the version go.mod selects (never copied into
// the repository).
func RunMainWithModuleCRDs(m interface{ Run() int }, env **Env, sets ...ModuleCRDs) int {
	var extra []string
	for _, s := range sets {
		dir, err := paths.ModuleDir(s.Module)
		if err != nil {
			fmt.Fprintln(os.Stderr, "integration:", err)
			return 1
		}
		for _, p := range s.Paths {
			f := filepath.Join(dir, p)
			if _, err := os.Stat(f); err != nil {
				fmt.Fprintf(os.Stderr, "integration: CRDs of %s: %v\n", s.Module, err)
				return 1
			}
			extra = append(extra, f)
		}
	}
	return RunMainWithCRDs(m, env, extra...)
}
