package benchenv

import (
	"reflect"
	"testing"
)

func TestParseTerminatedWatchers(t *testing.T) {
	page := []byte(`# HELP apiserver_terminated_watchers_total [STABLE] Counter of watchers closed due to unresponsiveness broken by resource type.
# TYPE apiserver_terminated_watchers_total counter
apiserver_terminated_watchers_total{group="kueue.x-k8s.io",resource="workloads"} 130
apiserver_terminated_watchers_total{group="kueue.x-k8s.io",resource="clusterqueues"} 2
apiserver_terminated_watchers_total{group="",resource="events"} 1e+00
apiserver_request_total{code="200",resource="workloads",verb="WATCH"} 129
garbage line
`)
	got := ParseTerminatedWatchers(page)
	want := map[string]int64{"workloads": 130, "clusterqueues": 2, "events": 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseTerminatedWatchers = %v, want %v", got, want)
	}
}
