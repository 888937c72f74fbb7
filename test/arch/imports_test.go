// Package arch checks architectural rules that the compiler does not: the
// scheduling core stays pure.
package arch

import (
	"os/exec"
	"strings"
	"testing"
)

// purePackages decide; they must not do I/O through Kubernetes clients, nor
// depend on metrics or feature-gate globals (DESIGN.md section 3).
var purePackages = []string{
	"github.com/kuota-dev/kuota/internal/resources",
	"github.com/kuota-dev/kuota/internal/hierarchy",
	"github.com/kuota-dev/kuota/internal/workload",
	"github.com/kuota-dev/kuota/internal/queueing",
	"github.com/kuota-dev/kuota/internal/state",
	"github.com/kuota-dev/kuota/internal/lifecycle",
	"github.com/kuota-dev/kuota/internal/provisioning",
	"github.com/kuota-dev/kuota/internal/afs",
	"github.com/kuota-dev/kuota/internal/multikueue",
	"github.com/kuota-dev/kuota/internal/scheduling/...",
}

// forbidden lists import path prefixes a pure package must not reach, with
// the reason; allowed lists exceptions inside those prefixes.
var forbidden = map[string]string{
	"k8s.io/client-go":                          "Kubernetes client (I/O)",
	"sigs.k8s.io/controller-runtime":            "controller-runtime client/manager (I/O)",
	"github.com/prometheus":                     "metrics",
	"k8s.io/component-base/featuregate":         "feature-gate globals",
	"k8s.io/component-base/metrics":             "metrics",
	"github.com/kuota-dev/kuota/internal/apply": "API writes",
	"os/exec": "running processes",
}

var allowed = []string{
	// Scheme registration of the API types; no client.
	"sigs.k8s.io/controller-runtime/pkg/scheme",
}

func TestPurePackagesImportNoIO(t *testing.T) {
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, purePackages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list returned only %d packages; the check would be vacuous", len(deps))
	}
	for _, dep := range deps {
		if isAllowed(dep) {
			continue
		}
		for prefix, why := range forbidden {
			if dep == prefix || strings.HasPrefix(dep, prefix+"/") {
				t.Errorf("a pure package depends on %s (%s); find who imports it with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' %s",
					dep, why, strings.Join(purePackages, " "))
			}
		}
	}
}

func isAllowed(dep string) bool {
	for _, a := range allowed {
		if dep == a {
			return true
		}
	}
	return false
}

// TestForbiddenListCatchesViolations makes sure the check itself works: a
// package known to use client-go must be flagged.
func TestForbiddenListCatchesViolations(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/kuota-dev/kuota/internal/devcluster").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "k8s.io/client-go/") {
		t.Fatal("internal/devcluster uses client-go, yet go list did not show it: the check is broken")
	}
}
