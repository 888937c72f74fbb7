package validation

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPackageIsPure keeps this package free of I/O: no client, no
// controller-runtime (other than the API types' scheme registration), no
// metrics.
func TestPackageIsPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list returned only %d packages; the check would be vacuous", len(deps))
	}
	forbidden := []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime", "github.com/prometheus", "github.com/kuota-dev/kuota/internal/"}
	for _, dep := range deps {
		// internal/resources is pure; its conversions decide what can be
		// counted, so validation uses them rather than a copy of the rule.
		if dep == "sigs.k8s.io/controller-runtime/pkg/scheme" || dep == "github.com/kuota-dev/kuota/internal/validation" ||
			dep == "github.com/kuota-dev/kuota/internal/resources" {
			continue
		}
		for _, prefix := range forbidden {
			if strings.HasPrefix(dep, prefix) {
				t.Errorf("internal/validation depends on %s", dep)
			}
		}
	}
}
