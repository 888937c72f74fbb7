package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kuota-dev/kuota/bench/internal/auditlog"
	"github.com/kuota-dev/kuota/bench/internal/benchenv"
	"github.com/kuota-dev/kuota/bench/internal/driver"
	"github.com/kuota-dev/kuota/bench/internal/summary"
)

// session is one run's processes; cleanup stops whatever is still running.
type session struct {
	o     Options
	sc    *plan
	tools string

	scheme                *runtime.Scheme
	cp                    *benchenv.ControlPlane
	mgr                   *benchenv.Manager
	cpStopped, mgrStopped bool
}

// The API server is profiled once, over apiProfileLength, starting
// apiProfileDelay into the schedule.
const (
	apiProfileDelay  = 10 * time.Second
	apiProfileLength = 30 * time.Second
)

func (s *session) cleanup() {
	if s.mgr != nil && !s.mgrStopped {
		_, _ = s.mgr.Stop(stopGrace)
		s.mgrStopped = true
	}
	if s.cp != nil && !s.cpStopped {
		_ = s.cp.Stop()
		s.cpStopped = true
	}
}

// execute starts the processes, sets the queues up and runs the schedule.
// An error means the schedule could not start; from then on, what goes
// wrong is recorded in the returned input.
func (s *session) execute(ctx context.Context) (*summary.Input, error) {
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	runCtx, stopDriver := context.WithCancel(ctx)
	defer stopDriver()
	d, err := driver.New(driver.Options{Config: s.cp.Config, Scheme: s.scheme, Plan: s.sc.plan})
	if err != nil {
		return nil, err
	}
	if err := d.Start(runCtx); err != nil {
		return nil, err
	}
	if t := s.sc.plan.Topology; t != nil {
		s.o.logf("creating Topology %s with %d Ready nodes", t.Name, len(s.sc.plan.Nodes))
	}
	s.o.logf("creating %d cohorts and %d ClusterQueues with their namespaces and LocalQueues",
		len(s.sc.plan.Cohorts), len(s.sc.plan.Queues))
	if err := d.Setup(runCtx, setupTimeout); err != nil {
		return nil, fmt.Errorf("setting the queues up: %w", err)
	}
	return s.measure(ctx, runCtx, d, stopDriver), nil
}

// start starts the API server, etcd and the manager, and waits for the
// manager to be ready.
func (s *session) start(ctx context.Context) error {
	var err error
	if s.scheme, err = newScheme(); err != nil {
		return err
	}
	s.o.logf("starting kube-apiserver and etcd (binaries in %s)", s.tools)
	s.cp, err = benchenv.StartControlPlane(benchenv.ControlPlaneOptions{ToolsBin: s.tools,
		CRDs: filepath.Join(s.o.Root, "config", "crd", "bases"), Dir: s.o.Out, Scheme: s.scheme,
		MaxInflight: MaxInflight, MaxMutatingInflight: MaxMutatingInflight})
	if err != nil {
		return err
	}
	s.o.logf("starting %s (log in %s)", s.o.Manager, filepath.Join(s.o.Out, "manager.log"))
	s.mgr, err = benchenv.StartManager(benchenv.ManagerOptions{Binary: s.o.Manager, Kubeconfig: s.cp.ManagerKubeconfig,
		Dir: s.o.Out, LogLevel: s.o.LogLevel, Pprof: s.o.Pprof})
	if err != nil {
		return err
	}
	return s.mgr.WaitReady(ctx, readyTimeout)
}

// measure runs the schedule while measuring the processes, audits, then
// stops the manager and the control plane and counts the manager's writes.
func (s *session) measure(ctx, runCtx context.Context, d *driver.Driver, stopDriver context.CancelFunc) *summary.Input {
	in := &summary.Input{Scenario: s.sc.name, Plan: s.sc.plan, WorkloadClasses: s.sc.cfg.WorkloadClasses(), Targets: s.sc.targets}
	var prof *benchenv.Profiler
	var apiProf <-chan error
	if s.o.Pprof {
		prof = s.mgr.StartCPUProfile(s.o.Out, s.o.ProfileSlice)
		apiProf = benchenv.APIServerProfile(runCtx, s.cp.Config, apiProfileDelay, apiProfileLength,
			filepath.Join(s.o.Out, "apiserver-cpu.pprof"))
	}
	var onGrowth func()
	if s.o.Pprof {
		peakHeap := filepath.Join(s.o.Out, "manager-heap-peak.pprof")
		onGrowth = func() {
			if err := s.mgr.SaveHeapProfile(runCtx, peakHeap); err != nil && runCtx.Err() == nil {
				s.o.logf("saving the manager's heap profile: %v", err)
			}
		}
	}
	smp := startSampler(s.mgr.PID, sampleEvery, onGrowth)
	before := take(s.mgr.PID, s.cp.APIServerPID, s.cp.EtcdPID)
	total := len(s.sc.plan.Workloads)
	s.o.logf("running %d workloads (timeout %s)", total, s.o.Timeout)
	in.Result = d.Run(runCtx, s.o.Timeout, func(finished, total int) {
		s.o.logf("%d of %d workloads finished", finished, total)
		if exited, _ := s.mgr.Exited(); exited {
			stopDriver()
		}
	})
	after := take(s.mgr.PID, s.cp.APIServerPID, s.cp.EtcdPID)
	s.o.logf("run ended: %d of %d workloads finished", countFinished(in.Result), total)
	if exited, err := s.mgr.Exited(); exited {
		in.Problems = append(in.Problems, fmt.Sprintf("kuota-manager exited during the run: %v (log in %s)", err, s.mgr.LogPath))
	}
	if ctx.Err() == nil {
		in.Audit = s.audit(ctx)
	}
	if prof != nil {
		if path, err := prof.Stop(); err != nil {
			s.o.logf("CPU profile: %v", err)
		} else {
			s.o.logf("CPU profile in %s", path)
		}
	}
	if apiProf != nil {
		if err := <-apiProf; err != nil {
			s.o.logf("%v", err)
		} else {
			s.o.logf("API server CPU profile in %s", filepath.Join(s.o.Out, "apiserver-cpu.pprof"))
		}
	}
	stopDriver()
	peak := smp.Stop()
	stats, err := s.mgr.Stop(stopGrace)
	s.mgrStopped = true
	if err != nil {
		in.Problems = append(in.Problems, fmt.Sprintf("reading the manager's exit status: %v", err))
	}
	in.Manager = summary.Process{CPUSeconds: stats.CPU.Seconds(), RunCPUSeconds: (after.manager.CPU - before.manager.CPU).Seconds(),
		PeakRSSMiB: float64(max(peak, stats.PeakRSSBytes)) / mib}
	in.APIServer = controlPlaneProcess(s.cp.APIServerPID, before.apiServer, after.apiServer)
	in.Etcd = controlPlaneProcess(s.cp.EtcdPID, before.etcd, after.etcd)
	in.Machine = machineLoad(before.machine, after.machine)
	if tw, err := benchenv.TerminatedWatchers(ctx, s.cp.Config); err != nil {
		s.o.logf("%v", err)
	} else {
		in.TerminatedWatchers = tw
	}
	if err := s.cp.Stop(); err != nil {
		s.o.logf("%v", err)
	}
	s.cpStopped = true
	s.countWrites(in)
	return in
}

func (s *session) audit(ctx context.Context) *summary.Audit {
	c, err := client.New(s.cp.Config, client.Options{Scheme: s.scheme})
	if err != nil {
		return &summary.Audit{Error: err.Error()}
	}
	v := runAudit(ctx, c)
	s.o.logf("audit: %d violation(s) %s", v.Violations, v.Error)
	return v
}

// countWrites reads the manager's writes from the audit log, once the API
// server has stopped and so written every entry.
func (s *session) countWrites(in *summary.Input) {
	w, err := auditlog.ParseFile(s.cp.AuditLog, benchenv.ManagerUser)
	if err != nil {
		in.Problems = append(in.Problems, fmt.Sprintf("counting the manager's writes: %v", err))
		return
	}
	in.Writes = w
	if !s.o.KeepAuditLog {
		_ = os.Remove(s.cp.AuditLog)
	}
}

func countFinished(res *driver.Result) int {
	n := 0
	for i := range res.Records {
		if !res.Records[i].Finished.IsZero() {
			n++
		}
	}
	return n
}
