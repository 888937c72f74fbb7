package v1beta2

import (
	"net/url"
	"strings"
	"testing"
)

func TestOptionsFromQuery(t *testing.T) {
	cases := map[string]struct {
		query         string
		offset, limit int64
		err           string
	}{
		"defaults":            {query: "", offset: 0, limit: DefaultLimit},
		"both":                {query: "offset=5&limit=7", offset: 5, limit: 7},
		"limit capped":        {query: "limit=1000000", limit: MaxLimit},
		"negative offset":     {query: "offset=-1", err: "offset"},
		"limit not a number":  {query: "limit=ten", err: "limit"},
		"empty value default": {query: "limit=", limit: DefaultLimit},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			q, _ := url.ParseQuery(tc.query)
			var o PendingWorkloadOptions
			err := OptionsFromQuery(q, &o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil || o.Offset != tc.offset || o.Limit != tc.limit {
				t.Fatalf("got offset %d limit %d err %v, want %d %d", o.Offset, o.Limit, err, tc.offset, tc.limit)
			}
		})
	}
}

// Any query either fails or yields options within bounds.
func FuzzOptionsFromQuery(f *testing.F) {
	for _, s := range []string{"", "offset=1&limit=2", "limit=-3", "limit=99999999999999999999", "offset=x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		var o PendingWorkloadOptions
		if err := OptionsFromQuery(q, &o); err != nil {
			return
		}
		if o.Offset < 0 || o.Limit < 0 || o.Limit > MaxLimit {
			t.Fatalf("options out of bounds: %+v from %q", o, raw)
		}
	})
}
