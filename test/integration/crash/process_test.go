package crash

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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

// leaseAcquired is what client-go's leader election logs when this process
// takes the lease. The Lease's holderIdentity (hostname_uuid) does not say
// which of our processes holds it; the log does.
const leaseAcquired = "Successfully acquired lease"

// process is a running kuota-manager.
type process struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{} // closed when the process has exited
	err     error         // its exit status, once done is closed
	// killed: the test sent SIGKILL (any other exit is the process's own).
	killed atomic.Bool
	// leader: the process logged that it took the lease. It ends the
	// process if it loses the lease again.
	leader atomic.Bool
	out    *logWatcher
}

// startProcess starts kuota-manager with its output appended to logPath;
// onLeader is called when it logs that it took the lease.
func startProcess(bin, kubeconfig, config, logPath string, onLeader func(*process)) (*process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	p := &process{done: make(chan struct{})}
	fmt.Fprintf(log, "---- started at %s ----\n", time.Now().Format(time.RFC3339Nano))
	p.out = &logWatcher{file: log, onLine: func(line string) {
		if strings.Contains(line, leaseAcquired) {
			p.leader.Store(true)
			onLeader(p)
		}
	}}
	p.cmd = exec.Command(bin, "--config", config, "--kubeconfig", kubeconfig, "--zap-log-level", "info")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting kuota-manager: %w", err)
	}
	p.started = time.Now()
	go func() {
		p.err = p.cmd.Wait()
		how := "exited by itself"
		if p.killed.Load() {
			how = "killed with SIGKILL"
		}
		fmt.Fprintf(log, "---- %s at %s: %v ----\n", how, time.Now().Format(time.RFC3339Nano), p.err)
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill() error {
	p.killed.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("kuota-manager (pid %d) did not die within 10s of SIGKILL", p.cmd.Process.Pid)
	}
}

// logWatcher appends a process's output to its log file, calls onLine for
// each complete line and keeps the last lines, to explain an exit.
type logWatcher struct {
	file    *os.File
	onLine  func(string)
	mu      sync.Mutex
	partial []byte
	last    []string
}

// Write is called by os/exec's copying goroutine, one at a time.
func (w *logWatcher) Write(b []byte) (int, error) {
	_, _ = w.file.Write(b)
	w.mu.Lock()
	w.partial = append(w.partial, b...)
	var lines []string
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		lines = append(lines, line)
		w.last = append(w.last, line)
		if len(w.last) > 8 {
			w.last = w.last[1:]
		}
	}
	w.mu.Unlock()
	for _, l := range lines {
		w.onLine(l)
	}
	return len(b), nil
}

// tail returns the last lines the process wrote.
func (w *logWatcher) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(append(w.last, string(w.partial)), "\n")
}
