package app

import (
	"runtime/debug"
	"testing"
)

func TestTuneGCLowersTheTargetOnlyWhenGOGCIsUnset(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })

	unset := func(string) (string, bool) { return "", false }
	if got := TuneGC(unset); got != DefaultGCPercent {
		t.Errorf("GOGC unset: TuneGC = %d, want %d", got, DefaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != DefaultGCPercent {
		t.Errorf("GOGC unset: the collector runs at %d, want %d", got, DefaultGCPercent)
	}

	for env, want := range map[string]int{"200": 200, "off": -1, "junk": 100} {
		debug.SetGCPercent(100)
		set := func(name string) (string, bool) { return env, name == "GOGC" }
		if got := TuneGC(set); got != want {
			t.Errorf("GOGC=%s: TuneGC = %d, want %d", env, got, want)
		}
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("GOGC=%s: the manager changed the collector's target to %d; the environment must win", env, got)
		}
	}
}
