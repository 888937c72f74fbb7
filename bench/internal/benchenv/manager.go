package benchenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/procstat"
)

// BuildManager builds cmd/kuota-manager from the repository at root into
// dir and returns the binary's path.
func BuildManager(root, dir string) (string, error) {
	bin := filepath.Join(dir, "kuota-manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kuota-manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building kuota-manager: %w\n%s", err, out)
	}
	return bin, nil
}

// ManagerOptions configure the manager process.
type ManagerOptions struct {
	Binary     string
	Kubeconfig []byte
	// Dir receives the kubeconfig, the Configuration and the log.
	Dir string
	// LogLevel is passed as --zap-log-level.
	LogLevel string
	// Pprof serves net/http/pprof on a free local port.
	Pprof bool
}

// Manager is a running manager process.
type Manager struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// PID is the process id.
	PID int
	// HealthAddr and PprofAddr are the host:port of its endpoints.
	HealthAddr, PprofAddr string
	// LogPath is its combined output.
	LogPath string
}

// StartManager writes the kubeconfig and a Configuration (no leader
// election, no metrics server; health probes, the webhook server and
// optionally pprof on free local ports; webhook certificates in Dir) and
// starts the manager.
func StartManager(o ManagerOptions) (*Manager, error) {
	health, err := freeAddr()
	if err != nil {
		return nil, err
	}
	hook, err := freeAddr()
	if err != nil {
		return nil, err
	}
	_, hookPort, _ := net.SplitHostPort(hook)
	m := &Manager{HealthAddr: health, LogPath: filepath.Join(o.Dir, "manager.log"), done: make(chan struct{})}
	config := "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nleaderElection:\n  leaderElect: false\n" +
		"metrics:\n  bindAddress: \"0\"\nhealth:\n  healthProbeBindAddress: " + health + "\n" +
		"webhook:\n  port: " + hookPort + "\n  certDir: " + strconv.Quote(filepath.Join(o.Dir, "webhook-certs")) + "\n"
	if o.Pprof {
		if m.PprofAddr, err = freeAddr(); err != nil {
			return nil, err
		}
		config += "pprofBindAddress: " + m.PprofAddr + "\n"
	}
	kubeconfig, configPath := filepath.Join(o.Dir, "manager.kubeconfig"), filepath.Join(o.Dir, "manager-config.yaml")
	if err := os.WriteFile(kubeconfig, o.Kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing kubeconfig: %w", err)
	}
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		return nil, fmt.Errorf("writing configuration: %w", err)
	}
	logFile, err := os.Create(m.LogPath)
	if err != nil {
		return nil, fmt.Errorf("creating manager log: %w", err)
	}
	level := o.LogLevel
	if level == "" {
		level = "info"
	}
	m.cmd = exec.Command(o.Binary, "--config", configPath, "--kubeconfig", kubeconfig, "--zap-log-level", level)
	m.cmd.Stdout, m.cmd.Stderr = logFile, logFile
	// The manager dies with the harness, even if the harness is killed.
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting kuota-manager: %w", err)
	}
	m.PID = m.cmd.Process.Pid
	go func() {
		m.err = m.cmd.Wait()
		logFile.Close()
		close(m.done)
	}()
	return m, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// WaitReady waits until the manager answers its readiness probe.
func (m *Manager) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-m.done:
			return fmt.Errorf("kuota-manager exited: %v (log: %s)", m.err, m.LogPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get("http://" + m.HealthAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("kuota-manager not ready after %s (log: %s)", timeout, m.LogPath)
}

// Exited reports whether the process ended, and how.
func (m *Manager) Exited() (bool, error) {
	select {
	case <-m.done:
		return true, m.err
	default:
		return false, nil
	}
}

// ExitStats are the process's totals once it ended.
type ExitStats struct {
	CPU          time.Duration
	PeakRSSBytes int64
}

// Stop sends SIGTERM, waits up to grace, then kills, and returns the
// process's CPU time and peak RSS from its rusage.
func (m *Manager) Stop(grace time.Duration) (ExitStats, error) {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(grace):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
	st := m.cmd.ProcessState
	if st == nil {
		return ExitStats{}, errors.New("no process state")
	}
	out := ExitStats{CPU: st.UserTime() + st.SystemTime()}
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		out.PeakRSSBytes = ru.Maxrss * 1024
	}
	return out, nil
}

// Sample reads the live process's CPU time and memory.
func (m *Manager) Sample() (procstat.Sample, error) { return procstat.Read(m.PID) }

// fetch saves an endpoint of the pprof server into path.
// SaveHeapProfile writes the manager's heap profile to path (the manager
// must run with Pprof).
func (m *Manager) SaveHeapProfile(ctx context.Context, path string) error {
	return m.fetch(ctx, "/debug/pprof/heap", path)
}

func (m *Manager) fetch(ctx context.Context, endpoint, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.PprofAddr+endpoint, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching %s: %s", endpoint, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return f.Close()
}
