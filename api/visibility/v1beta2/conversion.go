package v1beta2

import (
	"fmt"
	"net/url"
	"strconv"

	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// addConversionFuncs registers how query parameters become
// PendingWorkloadOptions (the API server decodes a GET's options with it).
func addConversionFuncs(s *runtime.Scheme) error {
	return s.AddConversionFunc((*url.Values)(nil), (*PendingWorkloadOptions)(nil), func(a, b interface{}, _ conversion.Scope) error {
		return OptionsFromQuery(*a.(*url.Values), b.(*PendingWorkloadOptions))
	})
}

// OptionsFromQuery reads offset and limit from query parameters, applying
// the defaults; a value that is not a non-negative integer is an error
// naming the parameter. A limit above MaxLimit is lowered to it.
func OptionsFromQuery(q url.Values, out *PendingWorkloadOptions) error {
	out.Offset, out.Limit = 0, DefaultLimit
	if v, ok := q["offset"]; ok && len(v) > 0 && v[0] != "" {
		n, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("offset: must be a non-negative integer, got %q", v[0])
		}
		out.Offset = n
	}
	if v, ok := q["limit"]; ok && len(v) > 0 && v[0] != "" {
		n, err := strconv.ParseInt(v[0], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("limit: must be a non-negative integer, got %q", v[0])
		}
		out.Limit = min(n, MaxLimit)
	}
	return nil
}
