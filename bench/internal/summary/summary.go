// Package summary turns what a benchmark run recorded into its figures:
// wall time, time to admission per workload class, ClusterQueue usage per
// queue class, the manager's CPU, memory and API writes, the auditor's
// verdict, and each target met or missed. Compute is a pure function of
// its input; Render prints the result as a table.
package summary

import (
	"time"

	"github.com/kuota-dev/kuota/bench/internal/auditlog"
	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/internal/scenario"
)

// Input is everything a summary is computed from.
type Input struct {
	Scenario string
	Plan     *scenario.Plan
	// WorkloadClasses orders the time-to-admission rows (classes of the
	// plan missing here are appended in order of appearance).
	WorkloadClasses []string
	Result          *driver.Result
	// Targets may be nil.
	Targets *scenario.Targets
	Manager Process
	// APIServer and Etcd may be nil when their processes were not found.
	APIServer, Etcd *Process
	// Machine is the whole machine's load over the run; nil if unknown.
	Machine *Machine
	// TerminatedWatchers counts, per resource, the watchers the API server
	// closed for falling behind; nil if unknown.
	TerminatedWatchers map[string]int64
	// Writes are the manager's writes from the audit log; nil if unknown.
	Writes *auditlog.Counts
	// Audit is the auditor's verdict; nil if it did not run.
	Audit *Audit
	// Problems are what went wrong while measuring (the manager died, the
	// audit log could not be read); each one fails the run.
	Problems []string
}

// Process is what a process used.
type Process struct {
	// CPUSeconds is user plus system time over the process's life.
	CPUSeconds float64 `json:"cpuSeconds"`
	// RunCPUSeconds is the part spent between the start of the schedule
	// and the end of the run.
	RunCPUSeconds float64 `json:"runCpuSeconds"`
	// PeakRSSMiB is the high-water mark of resident memory.
	PeakRSSMiB float64 `json:"peakRssMiB"`
}

// Machine is what the whole machine did during the run (from the start of
// the schedule to the end), for context: the benchmark shares it with the
// API server, etcd, the harness and whatever else runs.
type Machine struct {
	CPUs int `json:"cpus"`
	// BusyCPUSeconds is non-idle CPU time summed over all CPUs.
	BusyCPUSeconds float64 `json:"busyCpuSeconds"`
	// BusyPercent is BusyCPUSeconds over all CPUs' time.
	BusyPercent float64 `json:"busyPercent"`
	// LoadAverage is the 1-minute load average at the end of the run.
	LoadAverage float64 `json:"loadAverage"`
}

// Audit is the auditor's verdict at the end of the run.
type Audit struct {
	Violations int      `json:"violations"`
	Messages   []string `json:"messages,omitempty"`
	// Error is set when the audit could not run.
	Error string `json:"error,omitempty"`
}

// Summary is a run's figures.
type Summary struct {
	Scenario  string `json:"scenario"`
	Completed bool   `json:"completed"`
	// Workloads planned, created, finished and admitted at least once.
	Workloads int `json:"workloads"`
	Created   int `json:"created"`
	Finished  int `json:"finished"`
	Admitted  int `json:"admitted"`
	// Admissions and Evictions count every one the harness saw.
	Admissions int `json:"admissions"`
	Evictions  int `json:"evictions"`
	// EvictionsPerWorkload is Evictions over the workloads created.
	EvictionsPerWorkload float64 `json:"evictionsPerWorkload"`
	// EvictionsByReason splits Evictions by reason (the preemption reason
	// for preemptions).
	EvictionsByReason map[string]int `json:"evictionsByReason,omitempty"`
	// EvictionsAfterFinish are evictions of workloads already finished.
	EvictionsAfterFinish int `json:"evictionsAfterFinish"`
	// WallSeconds runs from the start of the schedule to the last finish.
	WallSeconds float64 `json:"wallSeconds"`
	// CreateLag is how late creations were sent against their due time.
	CreateLagMeanMs float64 `json:"createLagMeanMs"`
	CreateLagMaxMs  float64 `json:"createLagMaxMs"`
	// TimeToAdmission has one row per workload class.
	TimeToAdmission []ClassLatency `json:"timeToAdmission"`
	// Usage has one row per ClusterQueue class.
	Usage     []ClassUsage `json:"usage"`
	Manager   Process      `json:"manager"`
	APIServer *Process     `json:"apiServer,omitempty"`
	Etcd      *Process     `json:"etcd,omitempty"`
	Machine   *Machine     `json:"machine,omitempty"`
	// TerminatedWatchers: watchers the API server closed for falling
	// behind, per resource.
	TerminatedWatchers map[string]int64 `json:"terminatedWatchers,omitempty"`
	Writes             *Writes          `json:"managerWrites,omitempty"`
	Driver             DriverWrites     `json:"driverWrites"`
	Audit              *Audit           `json:"audit,omitempty"`
	Targets            []Check          `json:"targets,omitempty"`
	// Replay is the simulator's replay of the run, beside it.
	Replay   *ReplayCheck `json:"replay,omitempty"`
	Problems []string     `json:"problems,omitempty"`
}

// DriverWrites are the harness's own writes.
type DriverWrites struct {
	Creates   int64 `json:"creates"`
	Finishes  int64 `json:"finishes"`
	Clears    int64 `json:"clears"`
	Conflicts int64 `json:"conflicts"`
	Errors    int64 `json:"errors"`
}

// Writes are the manager's API writes.
type Writes struct {
	// PerWorkload is WorkloadWrites divided by the workloads created;
	// every request counts, including those the server refused.
	PerWorkload float64 `json:"perWorkload"`
	// AcceptedPerWorkload leaves the refused ones out.
	AcceptedPerWorkload float64 `json:"acceptedPerWorkload"`
	// WorkloadWrites go to workloads and workloads/status.
	WorkloadWrites int64 `json:"workloadWrites"`
	// ClusterQueueStatus are writes to clusterqueues/status.
	ClusterQueueStatus int64 `json:"clusterQueueStatus"`
	// Other are all other writes (events, other kinds).
	Other int64 `json:"other"`
	Total int64 `json:"total"`
	// Failed writes were refused by the API server (conflicts, say).
	Failed     int64                               `json:"failed"`
	ByVerb     map[string]int64                    `json:"byVerb"`
	ByResource map[string]*auditlog.ResourceWrites `json:"byResource"`
}

// OK reports whether the run completed with a clean audit and no
// problems.
func (s *Summary) OK() bool {
	return s.Completed && len(s.Problems) == 0 && s.Audit != nil && s.Audit.Error == "" && s.Audit.Violations == 0
}

// Compute derives the summary of a run.
func Compute(in Input) *Summary {
	res := in.Result
	s := &Summary{Scenario: in.Scenario, Completed: res.Completed, Workloads: len(in.Plan.Workloads),
		WallSeconds: seconds(res.End.Sub(res.Start)), CreateLagMeanMs: millis(res.MeanCreateLag),
		CreateLagMaxMs: millis(res.MaxCreateLag), Manager: in.Manager, APIServer: in.APIServer, Etcd: in.Etcd, Machine: in.Machine,
		TerminatedWatchers: in.TerminatedWatchers,
		Driver: DriverWrites{Creates: res.Creates, Finishes: res.Finishes, Clears: res.Clears,
			Conflicts: res.Conflicts, Errors: res.Errors},
		Audit: in.Audit, Problems: in.Problems}
	if s.WallSeconds < 0 {
		s.WallSeconds = 0
	}
	for i := range res.Records {
		r := &res.Records[i]
		if !r.Created.IsZero() {
			s.Created++
		}
		if !r.Finished.IsZero() {
			s.Finished++
		}
		if len(r.Admissions) > 0 {
			s.Admitted++
		}
		s.Admissions += len(r.Admissions)
		s.Evictions += r.Evictions
		s.EvictionsAfterFinish += r.EvictionsAfterFinish
		for _, reason := range r.EvictionReasons {
			if s.EvictionsByReason == nil {
				s.EvictionsByReason = map[string]int{}
			}
			s.EvictionsByReason[reason]++
		}
	}
	if s.Created > 0 {
		s.EvictionsPerWorkload = float64(s.Evictions) / float64(s.Created)
	}
	s.TimeToAdmission = timeToAdmission(res.Records, classOrder(in))
	s.Usage = usage(in.Plan, res)
	if in.Writes != nil {
		s.Writes = writes(in.Writes, s.Created)
	}
	s.Targets = checkTargets(in.Targets, s)
	return s
}

func classOrder(in Input) []string {
	order := append([]string(nil), in.WorkloadClasses...)
	seen := map[string]bool{}
	for _, c := range order {
		seen[c] = true
	}
	for _, w := range in.Plan.Workloads {
		if !seen[w.Class] {
			seen[w.Class] = true
			order = append(order, w.Class)
		}
	}
	return order
}

func writes(c *auditlog.Counts, workloads int) *Writes {
	w := &Writes{WorkloadWrites: c.To("workloads", "workloads/status"), ClusterQueueStatus: c.To("clusterqueues/status"),
		Total: c.Writes, Failed: c.Failed, ByVerb: c.ByVerb, ByResource: c.ByResource}
	w.Other = w.Total - w.WorkloadWrites - w.ClusterQueueStatus
	var refused int64
	for _, k := range []string{"workloads", "workloads/status"} {
		if rw := c.ByResource[k]; rw != nil {
			refused += rw.Failed
		}
	}
	if workloads > 0 {
		w.PerWorkload = float64(w.WorkloadWrites) / float64(workloads)
		w.AcceptedPerWorkload = float64(w.WorkloadWrites-refused) / float64(workloads)
	}
	return w
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
