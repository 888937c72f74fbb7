package arch

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/kuota-dev/kuota"

// pkgInfo is what go list says of one package.
type pkgInfo struct {
	path, name string
	imports    []string // direct imports, production code only
	testOnly   []string // imports of its _test files
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}|{{.Name}}|{{join .Imports \",\"}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var pkgs []pkgInfo
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			t.Fatalf("unexpected go list line %q", line)
		}
		pkgs = append(pkgs, pkgInfo{path: f[0], name: f[1], imports: split(f[2]), testOnly: split(f[3])})
	}
	if len(pkgs) < 30 {
		t.Fatalf("go list found only %d packages; the checks would be vacuous", len(pkgs))
	}
	return pkgs
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

// An integration imports the jobframework and the API, never another
// integration nor the manager's internals; integrations/all lists them.
func TestIntegrationsImportOnlyTheJobframeworkAndTheAPI(t *testing.T) {
	allowed := []string{module + "/internal/jobframework", module + "/api", module + "/internal/resources"}
	checked := 0
	for _, p := range listPackages(t) {
		if !under(p.path, module+"/internal/integrations") || p.path == module+"/internal/integrations/all" {
			continue
		}
		checked++
		for _, imp := range p.imports {
			if !under(imp, module) {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || under(imp, a)
			}
			if !ok {
				t.Errorf("integration %s imports %s; integrations may import only %v", p.path, imp, allowed)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no integration package found")
	}
}

// The scheduler and the cache act on decisions; they import no controller
// package (the controllers import them, not the other way round).
func TestSchedulerAndCacheImportNoController(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.path != module+"/internal/scheduler" && p.path != module+"/internal/cache" {
			continue
		}
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", p.path).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if under(dep, module+"/internal/controller") {
				t.Errorf("%s depends on %s", p.path, dep)
			}
		}
	}
}

// internal/testutil holds test builders; only tests import it.
func TestTestutilOnlyInTests(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.imports {
			if under(imp, module+"/internal/testutil") && !under(p.path, module+"/internal/testutil") && !isTestPackage(p.path) {
				t.Errorf("%s imports internal/testutil outside of tests", p.path)
			}
		}
	}
}

// isTestPackage reports packages that exist only to hold tests and their
// harness (test/...), where production-code imports are test code too.
func isTestPackage(path string) bool { return under(path, module+"/test") }

// Package names are unique, so that no import needs an alias (commands and
// API version packages aside).
func TestPackageNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, p := range listPackages(t) {
		if p.name == "main" || (under(p.path, module+"/api") && strings.HasPrefix(p.name, "v1")) {
			continue
		}
		if prev, ok := seen[p.name]; ok {
			t.Errorf("package name %q is used by both %s and %s", p.name, prev, p.path)
		}
		seen[p.name] = p.path
	}
}
