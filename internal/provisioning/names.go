package provisioning

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// maxNameLength is the longest object name the API server takes for a
// ProvisioningRequest or a PodTemplate (a DNS subdomain).
const maxNameLength = 253

// RequestName is the name of the ProvisioningRequest that attempt (from 1)
// of the check makes for the workload: "<workload>-<check>-<attempt>".
// A name that would be too long keeps its start, a hash of the whole and
// the attempt, so different workloads never share a request.
func RequestName(workload, check string, attempt int32) string {
	return fitName(workload+"-"+check, fmt.Sprintf("-%d", attempt))
}

// TemplateName is the name of the PodTemplate that request name refers to
// for one of its pod sets: "ppt-<request>-<podset>".
func TemplateName(request, podSet string) string {
	return fitName("ppt-"+request+"-"+podSet, "")
}

// fitName returns base+suffix, or, when that is longer than
// maxNameLength, base cut short with a hash of base before suffix.
func fitName(base, suffix string) string {
	if len(base)+len(suffix) <= maxNameLength {
		return base + suffix
	}
	sum := sha256.Sum256([]byte(base))
	hash := hex.EncodeToString(sum[:])[:10]
	keep := maxNameLength - len(suffix) - len(hash) - 1
	return trimDashes(base[:keep]) + "-" + hash + suffix
}

// trimDashes drops trailing dots and dashes, which a name may not have
// before the hash's dash.
func trimDashes(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '-' || s[len(s)-1] == '.') {
		s = s[:len(s)-1]
	}
	return s
}
