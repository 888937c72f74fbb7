package sim

import (
	"os"
	"testing"
	"time"
)

// TestScenarioFigures runs a named scenario when KUOTA_SIM_SCENARIO is set
// and logs its figures (a manual check of speed and results; the
// simulator's speed is measured by kuota simulate itself).
func TestScenarioFigures(t *testing.T) {
	name := os.Getenv("KUOTA_SIM_SCENARIO")
	if name == "" {
		t.Skip("set KUOTA_SIM_SCENARIO to run")
	}
	setup, trace := loadScenario(t, name)
	opts := Options{Seed: 1}
	if p := os.Getenv("KUOTA_SIM_PATIENCE"); p != "" {
		d, err := time.ParseDuration(p)
		if err != nil {
			t.Fatal(err)
		}
		opts.Scheduling.Patience = d
	}
	if l := os.Getenv("KUOTA_SIM_LATENCY"); l != "" {
		lat, err := ParseLatency(l)
		if err != nil {
			t.Fatal(err)
		}
		opts.Latency = lat
	}
	res, err := Run(setup, trace, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res.Summary)
}
