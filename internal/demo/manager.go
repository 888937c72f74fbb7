package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Files of the manager in the state folder (.cache/demo).
const (
	managerConfigFile = "manager-config.yaml"
	managerLogFile    = "manager.log"
	certDirName       = "certs"
	// stopGrace is how long the manager gets to shut down cleanly (and
	// remove its webhook configurations) before it is killed.
	stopGrace = 20 * time.Second
)

// managerConfig is the Configuration the demo runs kuota-manager with: no
// leader election (a single process), health probes on healthPort, no
// metrics listener, webhooks on webhookPort with certificates in certDir,
// the pending-workloads API on visibilityPort.
func managerConfig(healthPort, webhookPort, visibilityPort int, certDir string) string {
	return fmt.Sprintf(`# Written by kuota demo for the manager it runs; rewritten on every run.
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
leaderElection:
  leaderElect: false
health:
  healthProbeBindAddress: "127.0.0.1:%d"
metrics:
  bindAddress: "0"
webhook:
  port: %d
  certDir: %q
visibilityServer:
  bindPort: %d
`, healthPort, webhookPort, certDir, visibilityPort)
}

// manager is kuota-manager running as a child process.
type manager struct {
	cmd     *exec.Cmd
	logPath string
	// done is closed when the process has exited; err is then its result.
	done chan struct{}
	err  error
}

// startManager writes the Configuration into stateDir and starts bin with
// it and --local-webhooks against the cluster of kubeconfig; the log goes
// to stateDir/manager.log.
func startManager(bin, stateDir, kubeconfig string) (*manager, error) {
	if err := os.MkdirAll(stateDir, 0o750); err != nil {
		return nil, fmt.Errorf("state folder: %w", err)
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(stateDir, managerConfigFile)
	body := managerConfig(ports[0], ports[1], ports[2], filepath.Join(stateDir, certDirName))
	if err := os.WriteFile(config, []byte(body), 0o600); err != nil {
		return nil, fmt.Errorf("writing the manager's configuration: %w", err)
	}
	logPath := filepath.Join(stateDir, managerLogFile)
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("manager log: %w", err)
	}
	cmd := exec.Command(bin, "--config", config, "--kubeconfig", kubeconfig, "--local-webhooks")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w (run `make build`)", bin, err)
	}
	m := &manager{cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		log.Close()
		close(m.done)
	}()
	return m, nil
}

// exited returns an error when the process has ended.
func (m *manager) exited() error {
	select {
	case <-m.done:
		return fmt.Errorf("kuota-manager exited (%v); the end of %s:\n%s", m.err, m.logPath, m.logTail(15))
	default:
		return nil
	}
}

// stop asks the manager to shut down (SIGTERM) and kills it after
// stopGrace.
func (m *manager) stop() error {
	select {
	case <-m.done:
		return nil
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping kuota-manager: %w", err)
	}
	select {
	case <-m.done:
		return nil
	case <-time.After(stopGrace):
		_ = m.cmd.Process.Kill()
		<-m.done
		return fmt.Errorf("kuota-manager did not stop within %s and was killed", stopGrace)
	}
}

// logTail is the last n lines of the manager's log.
func (m *manager) logTail(n int) string {
	data, err := os.ReadFile(m.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitWebhooks waits until the manager's webhooks suspend a dry-run Job.
func (m *manager) waitWebhooks(ctx context.Context, c client.Client, timeout time.Duration) error {
	err := poll(ctx, timeout, func(ctx context.Context) error {
		if err := m.exited(); err != nil {
			return permanentError{err}
		}
		return webhooksWork(ctx, c)
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("waiting for the manager's webhooks (log: %s): %w", m.logPath, err)
	}
	return err
}

// freePorts finds n free TCP ports on 127.0.0.1.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
