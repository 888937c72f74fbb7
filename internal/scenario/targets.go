package scenario

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Targets are the figures a scenario is expected to reach. They live next
// to the scenario as <name>.targets.yaml and are only reported, never
// enforced: timings depend on the machine.
type Targets struct {
	// MaxWallSeconds bounds the wall time.
	MaxWallSeconds float64 `json:"maxWallSeconds,omitempty"`
	// MinUsagePercent is the least mean ClusterQueue usage, as a
	// percentage of nominal quota, per ClusterQueue class.
	MinUsagePercent float64 `json:"minUsagePercent,omitempty"`
	// MaxMeanTimeToAdmissionSeconds bounds the mean time to admission per
	// workload class.
	MaxMeanTimeToAdmissionSeconds map[string]float64 `json:"maxMeanTimeToAdmissionSeconds,omitempty"`
	// MaxManagerWritesPerWorkload bounds the manager's writes to Workloads
	// (and their status) per workload.
	MaxManagerWritesPerWorkload float64 `json:"maxManagerWritesPerWorkload,omitempty"`
	// MaxEvictionsPerWorkload bounds evictions over workloads created.
	MaxEvictionsPerWorkload *float64 `json:"maxEvictionsPerWorkload,omitempty"`
	// Kueue holds Kueue's own figures on the same scenario and machine,
	// for comparison (not checked).
	Kueue *Reference `json:"kueue,omitempty"`
}

// Reference is another scheduler's measured figures on a scenario.
type Reference struct {
	// Source says how they were measured.
	Source                     string             `json:"source,omitempty"`
	WallSeconds                float64            `json:"wallSeconds,omitempty"`
	UsagePercent               float64            `json:"usagePercent,omitempty"`
	MeanTimeToAdmissionSeconds map[string]float64 `json:"meanTimeToAdmissionSeconds,omitempty"`
	Evictions                  int                `json:"evictions,omitempty"`
}

// TargetsPath is where the targets of the scenario at path live.
func TargetsPath(path string) string {
	return strings.TrimSuffix(path, ".yaml") + ".targets.yaml"
}

// LoadTargets reads the targets beside the scenario file; it returns nil
// when there are none.
func LoadTargets(scenarioPath string) (*Targets, error) {
	data, err := os.ReadFile(TargetsPath(scenarioPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading targets: %w", err)
	}
	var t Targets
	if err := yaml.UnmarshalStrict(data, &t); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", TargetsPath(scenarioPath), err)
	}
	return &t, nil
}
