package apply

import (
	"errors"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// The manager's informer cache keeps a finished Workload without the parts
// of its status nothing reads once it is over (the admission's flavors and
// usage, the resource requests): with thousands of finished Workloads that
// is most of the manager's memory. Such a copy carries TrimmedAnnotation,
// in memory only, and a status written from it would remove what it lacks
// (server-side apply drops the fields a manager owns and leaves out), so
// the Writer refuses it.

// TrimmedAnnotation marks a cached Workload whose status was cut. It is
// never written to the API: the manager writes Workloads with status
// applies built from AdmissionStatus, which the Writer refuses for such a
// copy, and with patches of the fields it changes.
const TrimmedAnnotation = "kuota.dev/cache-trimmed"

// ErrTrimmed is returned for a status write built from a trimmed copy.
var ErrTrimmed = errors.New("refusing to write the status of a finished Workload from the cache's trimmed copy (read it from the API server)")

// MarkTrimmed marks wl as a trimmed copy.
func MarkTrimmed(wl *kueue.Workload) {
	if wl.Annotations == nil {
		wl.Annotations = map[string]string{}
	}
	wl.Annotations[TrimmedAnnotation] = "true"
}

// Trimmed reports whether wl is a trimmed copy.
func Trimmed(wl *kueue.Workload) bool {
	_, ok := wl.Annotations[TrimmedAnnotation]
	return ok
}
