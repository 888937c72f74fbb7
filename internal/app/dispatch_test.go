package app

import (
	"testing"

	"k8s.io/utils/ptr"

	configapi "github.com/kuota-dev/kuota/api/config/v1beta2"
	mkdecide "github.com/kuota-dev/kuota/internal/multikueue"
)

func TestDispatchFromConfiguration(t *testing.T) {
	incremental := &configapi.MultiKueue{DispatcherName: ptr.To(configapi.MultiKueueDispatcherModeIncremental),
		IncrementalDispatcherConfig: &configapi.IncrementalDispatcherConfig{StepSize: ptr.To[int32](5)}}
	for name, tc := range map[string]struct {
		mk    *configapi.MultiKueue
		gates map[string]bool
		want  mkdecide.Dispatch
	}{
		"default":     {&configapi.MultiKueue{}, nil, mkdecide.Dispatch{}},
		"incremental": {incremental, nil, mkdecide.Dispatch{Incremental: true, Step: 5, Round: incrementalRound}},
		"incremental, step gate off, config order gate off": {incremental,
			map[string]bool{"MultiKueueIncrementalDispatcherConfig": false, "MultiKueueIncrementalDispatcherRespectConfigOrder": false},
			mkdecide.Dispatch{Incremental: true, Step: 3, Round: incrementalRound, Alphabetical: true}},
		"external": {&configapi.MultiKueue{DispatcherName: ptr.To("example.com/dispatcher")}, nil, mkdecide.Dispatch{External: true}},
	} {
		if got := dispatch(tc.mk, tc.gates); got != tc.want {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}
