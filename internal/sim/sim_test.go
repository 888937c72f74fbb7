package sim

import (
	"path/filepath"
	"testing"

	"github.com/kuota-dev/kuota/internal/scenario"
)

func loadScenario(t testing.TB, name string) (*Setup, []Workload) {
	t.Helper()
	cfg, err := scenario.Load(scenario.Resolve(name, filepath.Join("..", "..", "bench", "scenarios")))
	if err != nil {
		t.Fatal(err)
	}
	return FromScenario(cfg.Expand(), "bench-flavor")
}

func TestSmokeRunsToTheEnd(t *testing.T) {
	setup, trace := loadScenario(t, "smoke")
	res, err := Run(setup, trace, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Finished != s.Workloads || s.Workloads == 0 {
		t.Fatalf("finished %d of %d", s.Finished, s.Workloads)
	}
	t.Logf("%+v", s)
}
