package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrlcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/yaml"

	kueue "github.com/kuota-dev/kuota/api/kueue/v1beta2"
	"github.com/kuota-dev/kuota/bench/internal/auditlog"
	"github.com/kuota-dev/kuota/bench/internal/benchenv"
	"github.com/kuota-dev/kuota/bench/internal/summary"
)

// ClientKubeconfigFile is the kubeconfig an external client is given, in
// the results folder; its path is also in the client's KUBECONFIG.
const ClientKubeconfigFile = "client.kubeconfig"

// ExternalSummaryFile and ClientLogFile are written by RunExternal.
const (
	ExternalSummaryFile = "external.yaml"
	ClientLogFile       = "client.log"
)

// RunExternal runs a client of the user's choosing instead of the driver:
// the same API server, flags and audit log, and the manager as a process
// of its own, with the client's KUBECONFIG pointing at them. This is how
// Kueue's own scalability runner (in its existing-cluster mode) is run
// against Kuota. The client creates its queues and workloads and plays
// the jobs; the harness measures the processes, counts the Workloads
// created and evicted, and the manager's writes. The client's output goes
// to client.log in the results folder, and it runs in that folder.
// o.Timeout bounds the client (it is killed then).
func RunExternal(ctx context.Context, o Options, command []string) (*summary.External, error) {
	if len(command) == 0 {
		return nil, errors.New("no client command")
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Out == "" {
		o.Out = filepath.Join(o.Root, "bench", "results", "client-"+time.Now().UTC().Format("20060102-150405"))
	}
	out, err := filepath.Abs(o.Out)
	if err != nil {
		return nil, err
	}
	o.Out = out
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating results folder: %w", err)
	}
	tools, err := ToolsBin()
	if err != nil {
		return nil, err
	}
	if o.Manager == "" {
		o.logf("building kuota-manager into %s", o.Out)
		if o.Manager, err = benchenv.BuildManager(o.Root, o.Out); err != nil {
			return nil, err
		}
	}
	s := &session{o: o, tools: tools}
	defer s.cleanup()
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(o.Out, ClientKubeconfigFile)
	if err := os.WriteFile(kubeconfig, s.cp.ClientKubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the client's kubeconfig: %w", err)
	}
	seen, err := watchWorkloads(ctx, s.cp.Config, s.scheme)
	if err != nil {
		return nil, err
	}
	e := summary.External{Command: command}
	smp := startSampler(s.mgr.PID, sampleEvery, nil)
	before := take(s.mgr.PID, s.cp.APIServerPID, s.cp.EtcdPID)
	o.logf("running %q (KUBECONFIG=%s, output in %s)", command, kubeconfig, filepath.Join(o.Out, ClientLogFile))
	start := time.Now()
	if err := runClient(ctx, o, command, kubeconfig); err != nil {
		e.ExitError = err.Error()
	}
	e.WallSeconds = time.Since(start).Seconds()
	after := take(s.mgr.PID, s.cp.APIServerPID, s.cp.EtcdPID)
	seen.stop()
	e.Workloads, e.Evictions, e.EvictionsByReason = seen.counts()
	if exited, err := s.mgr.Exited(); exited {
		e.Problems = append(e.Problems, fmt.Sprintf("kuota-manager exited during the run: %v (log in %s)", err, s.mgr.LogPath))
	}
	peak := smp.Stop()
	stats, err := s.mgr.Stop(stopGrace)
	s.mgrStopped = true
	if err != nil {
		e.Problems = append(e.Problems, fmt.Sprintf("reading the manager's exit status: %v", err))
	}
	e.Manager = summary.Process{CPUSeconds: stats.CPU.Seconds(), RunCPUSeconds: (after.manager.CPU - before.manager.CPU).Seconds(),
		PeakRSSMiB: float64(max(peak, stats.PeakRSSBytes)) / mib}
	e.APIServer = controlPlaneProcess(s.cp.APIServerPID, before.apiServer, after.apiServer)
	e.Etcd = controlPlaneProcess(s.cp.EtcdPID, before.etcd, after.etcd)
	e.Machine = machineLoad(before.machine, after.machine)
	if err := s.cp.Stop(); err != nil {
		o.logf("%v", err)
	}
	s.cpStopped = true
	counts, err := auditlog.ParseFile(s.cp.AuditLog, benchenv.ManagerUser)
	if err != nil {
		e.Problems = append(e.Problems, fmt.Sprintf("counting the manager's writes: %v", err))
	}
	if !o.KeepAuditLog {
		_ = os.Remove(s.cp.AuditLog)
	}
	res := summary.NewExternal(e, counts)
	data, err := yaml.Marshal(res)
	if err != nil {
		return res, fmt.Errorf("encoding the summary: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.Out, ExternalSummaryFile), data, 0o644); err != nil {
		return res, fmt.Errorf("writing the summary: %w", err)
	}
	o.logf("results in %s", o.Out)
	if res.ExitError != "" {
		return res, fmt.Errorf("the client failed: %s (output in %s)", res.ExitError, filepath.Join(o.Out, ClientLogFile))
	}
	if len(res.Problems) > 0 {
		return res, errors.New(res.Problems[0])
	}
	return res, nil
}

// runClient runs the command in the results folder with its output in
// client.log, killing it (and its children) on timeout or interrupt.
func runClient(ctx context.Context, o Options, command []string, kubeconfig string) error {
	logFile, err := os.Create(filepath.Join(o.Out, ClientLogFile))
	if err != nil {
		return fmt.Errorf("creating the client's log: %w", err)
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Dir = o.Out
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("stopped after %s: %w", o.Timeout, ctx.Err())
	}
	return err
}

// workloadWatch counts the Workloads created and their evictions.
type workloadWatch struct {
	cancel  context.CancelFunc
	mu      sync.Mutex
	evicted map[types.UID]bool
	count   int
	reasons map[string]int
}

func watchWorkloads(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) (*workloadWatch, error) {
	c, err := ctrlcache.New(cfg, ctrlcache.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating the Workload watch: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &workloadWatch{cancel: cancel, evicted: map[types.UID]bool{}, reasons: map[string]int{}}
	inf, err := c.GetInformer(ctx, &kueue.Workload{})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watching Workloads: %w", err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.see(obj) },
		UpdateFunc: func(_, obj any) { w.see(obj) },
	}); err != nil {
		cancel()
		return nil, fmt.Errorf("watching Workloads: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, errors.New("the Workload watch did not sync")
	}
	return w, nil
}

func (w *workloadWatch) see(obj any) {
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return
	}
	cond := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	evicted := cond != nil && cond.Status == "True"
	w.mu.Lock()
	defer w.mu.Unlock()
	was, known := w.evicted[wl.UID]
	if !known {
		w.count++
	}
	if evicted && !was {
		reason := cond.Reason
		if p := meta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPreempted); p != nil && p.Status == "True" && reason == kueue.WorkloadEvictedByPreemption {
			reason = p.Reason
		}
		w.reasons[reason]++
	}
	w.evicted[wl.UID] = evicted
}

func (w *workloadWatch) stop() { w.cancel() }

func (w *workloadWatch) counts() (workloads, evictions int, reasons map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.reasons {
		evictions += n
	}
	if len(w.reasons) == 0 {
		return w.count, 0, nil
	}
	return w.count, evictions, w.reasons
}
