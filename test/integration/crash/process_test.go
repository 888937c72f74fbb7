package crash

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kuota-dev/kuota/internal/paths"
)

// managerBinary builds cmd/kuota-manager once.
func managerBinary(t *testing.T) string {
	t.Helper()
	root, err := paths.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "kuota-manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kuota-manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kuota-manager: %v\n%s", err, out)
	}
	return bin
}

// process is a running kuota-manager.
type process struct {
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

func startProcess(t *testing.T, bin, kubeconfig, config, logPath string) *process {
	t.Helper()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", config, "--kubeconfig", kubeconfig, "--zap-log-level", "info")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kuota-manager: %v", err)
	}
	p := &process{cmd: cmd, done: make(chan error, 1), log: log}
	go func() { p.done <- cmd.Wait() }()
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("kuota-manager did not die within 10s of SIGKILL")
	}
	fmt.Fprintf(p.log, "---- killed with SIGKILL at %s ----\n", time.Now().Format(time.RFC3339Nano))
	p.log.Close()
}

// exited reports whether the process ended on its own.
func (p *process) exited() (bool, error) {
	select {
	case err := <-p.done:
		return true, err
	default:
		return false, nil
	}
}
