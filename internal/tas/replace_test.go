package tas

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/internal/resources"
)

// show renders an assignment as Domains does, "value:count ...".
func show(t *testing.T, a *kueue.TopologyAssignment) string {
	t.Helper()
	domains, err := Domains(a)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, d := range domains {
		parts = append(parts, fmt.Sprintf("%s:%d", strings.Join(d.Values, "/"), d.Count))
	}
	return strings.Join(parts, " ")
}

// The pods of a failed node move to other nodes, within the domain the
// request requires, with the pods elsewhere kept in place.
func TestReplace(t *testing.T) {
	tree := NewTree(hostLevels, cluster())
	a, _ := tree.Place(Request{Count: 6, PerPod: oneCPU, Required: rack})
	if got := show(t, a); got != "h3:3 h4:3" {
		t.Fatalf("placement %s", got)
	}
	used := tree.Clone()
	used.Use(a, oneCPU)

	// Rack r2 has no room left for h4's 3 pods: a rack is required.
	if got, why := used.Replace(a, oneCPU, map[string]bool{"h4": true}, rack); got != nil || !strings.Contains(why, "no room for the 3 pods") {
		t.Errorf("required rack without room: %v, %q", got, why)
	}
	// Anywhere: they go to rack r1.
	got, why := used.Replace(a, oneCPU, map[string]bool{"h4": true}, "")
	if got == nil {
		t.Fatalf("anywhere: %s", why)
	}
	if s := show(t, got); !strings.Contains(s, "h3:3") || strings.Contains(s, "h4") || total(t, got) != 6 {
		t.Errorf("anywhere: %s, want h3's 3 pods kept and h4's 3 elsewhere", s)
	}

	// One pod per node in rack r1: the failed node's pod moves to h2 there.
	b, _ := tree.Place(Request{Count: 2, PerPod: resourcesCPU(3), Required: rack})
	if s := show(t, b); s != "h1:1 h2:1" {
		t.Fatalf("placement %s", s)
	}
	used = tree.Clone()
	used.Use(b, resourcesCPU(3))
	if got, why := used.Replace(b, resourcesCPU(1), map[string]bool{"h1": true}, rack); got == nil || show(t, got) != "h2:2" {
		t.Errorf("within the rack: %v %q", got, why)
	}
	// Every pod lost: the rack that fits them best.
	if got, why := used.Replace(b, oneCPU, map[string]bool{"h1": true, "h2": true}, rack); got == nil || show(t, got) != "h5:2" {
		t.Errorf("all pods lost: %v %q", got, why)
	}
	// Nothing failed: the same assignment.
	if got, _ := used.Replace(b, oneCPU, map[string]bool{"h5": true}, rack); got != b {
		t.Errorf("no failed node: %v", got)
	}
}

func resourcesCPU(n int64) resources.Requests {
	return resources.Requests{corev1.ResourceCPU: n * resources.One}
}

func total(t *testing.T, a *kueue.TopologyAssignment) int32 {
	t.Helper()
	domains, err := Domains(a)
	if err != nil {
		t.Fatal(err)
	}
	n := int32(0)
	for _, d := range domains {
		n += d.Count
	}
	return n
}
