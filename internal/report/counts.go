package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Counts lists named counts as "a 3, b 1", sorted by name, leaving out
// zeros; "" when nothing is left.
func Counts[V ~int | ~int64](m map[string]V) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	return strings.Join(parts, ", ")
}
