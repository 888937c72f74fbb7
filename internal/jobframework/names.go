package jobframework

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// maxNameLength is the longest object name the API accepts.
const maxNameLength = 253

// hashLength is the number of hex digits of the name's hash suffix.
const hashLength = 5

// WorkloadName is the name of a job's Workload, as Kueue derives it: the
// lower-case kind and the job name (cut to fit), then the first five hex
// digits of a SHA-1 over the kind, group, name and UID, so that a job
// recreated under the same name gets a new Workload.
func WorkloadName(jobName string, uid types.UID, gvk schema.GroupVersionKind) string {
	prefix := strings.ToLower(gvk.Kind) + "-" + jobName
	if limit := maxNameLength - 1 - hashLength; len(prefix) > limit {
		prefix = prefix[:limit]
	}
	sum := sha1.Sum([]byte(strings.Join([]string{gvk.Kind, gvk.Group, jobName, string(uid)}, "\n")))
	return prefix + "-" + hex.EncodeToString(sum[:])[:hashLength]
}
