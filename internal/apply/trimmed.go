package apply

import (
	"errors"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
)

// The manager's informer cache keeps a finished Workload without what
// nothing reads once it is over (its pod templates, the admission's
// flavors and usage, the resource requests): with thousands of finished Workloads that
// is most of the manager's memory. Such a copy is marked (MarkTrimmed), in
// memory only, and a status written from it would remove what it lacks
// (server-side apply drops the fields a manager owns and leaves out), so
// the Writer refuses it.

// trimmedMark marks a trimmed copy in metadata.selfLink, a field API
// servers have not set since Kubernetes 1.20 and drop on write: the mark
// costs no allocation, and never reaches the API even if an object carrying
// it were sent.
const trimmedMark = "kuota.dev/cache-trimmed"

// ErrTrimmed is returned for a status write built from a trimmed copy.
var ErrTrimmed = errors.New("refusing to write the status of a finished Workload from the cache's trimmed copy (read it from the API server)")

// MarkTrimmed marks wl as a trimmed copy.
func MarkTrimmed(wl *kueue.Workload) {
	wl.SelfLink = trimmedMark //nolint:staticcheck // deprecated and unset by API servers: used as an in-memory mark
}

// Trimmed reports whether wl is a trimmed copy.
func Trimmed(wl *kueue.Workload) bool {
	return wl.SelfLink == trimmedMark //nolint:staticcheck // see MarkTrimmed
}
