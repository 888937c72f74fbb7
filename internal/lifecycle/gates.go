package lifecycle

import (
	"slices"
	"strings"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// AdmissionGates returns the gates of kueue.AdmissionGatedByAnnotation that
// hold a pending workload back, sorted; nil when none. An external
// controller removes its gate when it is done with the workload (for
// instance, after it has prepared something the job needs); the last one
// removed lets the workload queue.
func AdmissionGates(wl *kueue.Workload) []string {
	value, ok := wl.Annotations[kueue.AdmissionGatedByAnnotation]
	if !ok {
		return nil
	}
	var out []string
	for g := range strings.SplitSeq(value, ",") {
		if g = strings.TrimSpace(g); g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// gatedMessage says which gates hold a workload back.
func gatedMessage(gates []string) string {
	return "admission is gated by " + strings.Join(gates, ", ") + " (annotation " + kueue.AdmissionGatedByAnnotation + ")"
}
