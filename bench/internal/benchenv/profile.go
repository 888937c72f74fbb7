package benchenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Profiler collects the manager's CPU profile over a run, in back-to-back
// slices (the pprof endpoint profiles for a fixed number of seconds), and
// merges them at the end.
type Profiler struct {
	m      *Manager
	dir    string
	slice  time.Duration
	cancel context.CancelFunc
	done   chan struct{}
	files  []string
	errs   []error
}

// StartCPUProfile starts profiling in slices of slice; files go to dir.
func (m *Manager) StartCPUProfile(dir string, slice time.Duration) *Profiler {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Profiler{m: m, dir: dir, slice: slice, cancel: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p
}

func (p *Profiler) loop(ctx context.Context) {
	defer close(p.done)
	for i := 0; ctx.Err() == nil; i++ {
		path := filepath.Join(p.dir, fmt.Sprintf("manager-cpu-%03d.pprof", i))
		// The slice in flight when the run ends is completed, not cut.
		err := p.m.fetch(context.Background(), fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(p.slice.Seconds())), path)
		if err != nil {
			p.errs = append(p.errs, err)
			return
		}
		p.files = append(p.files, path)
	}
}

// Stop waits for the slice in flight, saves a heap profile, and merges the
// CPU slices into manager-cpu.pprof with `go tool pprof -proto`. It returns
// the merged profile's path.
func (p *Profiler) Stop() (string, error) {
	p.cancel()
	<-p.done
	if err := p.m.fetch(context.Background(), "/debug/pprof/heap", filepath.Join(p.dir, "manager-heap.pprof")); err != nil {
		p.errs = append(p.errs, err)
	}
	if len(p.files) == 0 {
		return "", fmt.Errorf("no CPU profile collected: %v", p.errs)
	}
	merged := filepath.Join(p.dir, "manager-cpu.pprof")
	out, err := os.Create(merged)
	if err != nil {
		return "", err
	}
	defer out.Close()
	cmd := exec.Command("go", append([]string{"tool", "pprof", "-proto"}, p.files...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("merging CPU profiles: %w: %s", err, stderr.String())
	}
	for _, f := range p.files {
		_ = os.Remove(f)
	}
	return merged, nil
}
