package summary

import (
	"io"
	"strings"

	"github.com/kuota-dev/kuota/bench/internal/auditlog"
	"github.com/kuota-dev/kuota/internal/report"
)

// External is the figures of a run whose workloads came from a client of
// the user's choosing (Kueue's scalability runner, say) instead of the
// harness's driver: the client's own output holds time to admission and
// usage; the harness adds what the client cannot see.
type External struct {
	Command []string `json:"command"`
	// ExitError is the client's exit status when it failed.
	ExitError string `json:"exitError,omitempty"`
	// WallSeconds is the client's run time, from its start to its exit.
	WallSeconds float64 `json:"wallSeconds"`
	// Workloads is how many Workloads were created while it ran;
	// Evictions how many times one of them was seen evicted.
	Workloads int `json:"workloads"`
	Evictions int `json:"evictions"`
	// EvictionsByReason counts them by the Evicted condition's reason.
	EvictionsByReason map[string]int `json:"evictionsByReason,omitempty"`
	Manager           Process        `json:"manager"`
	APIServer         *Process       `json:"apiServer,omitempty"`
	Etcd              *Process       `json:"etcd,omitempty"`
	Machine           *Machine       `json:"machine,omitempty"`
	Writes            *Writes        `json:"managerWrites,omitempty"`
	Problems          []string       `json:"problems,omitempty"`
}

// NewExternal fills the writes per workload from the audit counts.
func NewExternal(e External, c *auditlog.Counts) *External {
	if c != nil {
		e.Writes = writes(c, e.Workloads)
	}
	return &e
}

// RenderExternal prints an external run's figures.
func RenderExternal(w io.Writer, e *External) error {
	p := &printer{w: w}
	state := "exited 0"
	if e.ExitError != "" {
		state = "FAILED: " + e.ExitError
	}
	p.linef("Client %q %s after %.2f s", strings.Join(e.Command, " "), state, e.WallSeconds)
	p.linef("Workloads created: %d; evictions seen: %d (%.3f per workload)", e.Workloads, e.Evictions, perWorkload(e.Evictions, e.Workloads))
	if len(e.EvictionsByReason) > 0 {
		p.linef("Evictions by reason: %s", report.Counts(e.EvictionsByReason))
	}
	p.linef("")
	p.table([]string{"process", "CPU s (life)", "CPU s (run)", "peak RSS MiB"}, processRows(&Summary{Manager: e.Manager, APIServer: e.APIServer, Etcd: e.Etcd}))
	if m := e.Machine; m != nil {
		p.linef("Machine during the run: %.1f CPU s busy of %d CPUs (%.0f%%), load average %.2f at the end",
			m.BusyCPUSeconds, m.CPUs, m.BusyPercent, m.LoadAverage)
	}
	p.linef("")
	p.writes(e.Writes)
	for _, pr := range e.Problems {
		p.linef("PROBLEM: %s", pr)
	}
	return p.err
}

func perWorkload(n, workloads int) float64 {
	if workloads == 0 {
		return 0
	}
	return float64(n) / float64(workloads)
}
