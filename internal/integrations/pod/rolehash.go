package pod

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kuota-dev/kuota/internal/jobframework"
)

// roleHashLength is the number of hex digits of a role hash.
const roleHashLength = 8

// roleOf is the PodSet a group's pod belongs to: its role-hash annotation,
// or the hash of its shape.
func roleOf(p *corev1.Pod) (string, error) {
	if r := p.Annotations[jobframework.RoleHashAnnotation]; r != "" {
		return r, nil
	}
	return roleHash(&p.Spec)
}

// roleHash hashes what decides a pod's admission (its requests, ports,
// placement constraints, priority and overhead): pods of the same hash are
// interchangeable and share a PodSet. The digest is that of the JSON
// object {"spec": shape} with its keys sorted, as Kueue computes it, so
// that a group's PodSets have the same names under both.
func roleHash(spec *corev1.PodSpec) (string, error) {
	shape := map[string]any{
		"initContainers":            containerShapes(spec.InitContainers),
		"containers":                containerShapes(spec.Containers),
		"nodeSelector":              spec.NodeSelector,
		"affinity":                  spec.Affinity,
		"tolerations":               spec.Tolerations,
		"runtimeClassName":          spec.RuntimeClassName,
		"priority":                  spec.Priority,
		"topologySpreadConstraints": spec.TopologySpreadConstraints,
		"overhead":                  spec.Overhead,
		"resourceClaims":            spec.ResourceClaims,
	}
	if spec.Resources != nil {
		shape["resources"] = spec.Resources.Requests
	}
	data, err := json.Marshal(map[string]any{"spec": shape})
	if err != nil {
		return "", fmt.Errorf("hashing the pod's shape: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:roleHashLength], nil
}

// containerShapes keeps what of each container matters to admission.
func containerShapes(cs []corev1.Container) []map[string]any {
	var out []map[string]any
	for _, c := range cs {
		out = append(out, map[string]any{
			"resources": map[string]any{"requests": c.Resources.Requests},
			"ports":     c.Ports,
		})
	}
	return out
}
