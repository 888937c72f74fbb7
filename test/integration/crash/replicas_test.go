package crash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// replicaSet runs several kuota-manager processes under one lease. Each
// slot has a supervisor that restarts its process after it dies: after a
// random delay of up to 2 s when the test killed it, after 500 ms when it
// exited by itself (which it does when it loses the lease, e.g. while the
// API server restarts).
type replicaSet struct {
	bin, kubeconfig, config string
	// onLeader is called when a process takes the lease.
	onLeader func(slot int, at time.Time)
	// outage reports whether the control plane was down around a moment;
	// an exit then is expected.
	outage func(at time.Time) bool

	mu       sync.Mutex
	slots    []*process // current process per slot; nil while restarting
	starts   int
	exits    []string // exits of processes by themselves, explained
	problems []string // exits that nothing explains, start failures
	wg       sync.WaitGroup
}

// replicaLog is where slot i's processes write, kept after the test.
func replicaLog(i int) string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("kuota-crash-manager-%d.log", i))
}

// start launches n supervisors; they stop restarting once ctx ends.
func (rs *replicaSet) start(ctx context.Context, n int, seed uint64) {
	rs.slots = make([]*process, n)
	for i := range n {
		_ = os.Remove(replicaLog(i))
		rs.wg.Add(1)
		go rs.supervise(ctx, i, rand.New(rand.NewPCG(seed, uint64(i)+100)))
	}
}

func (rs *replicaSet) supervise(ctx context.Context, slot int, rng *rand.Rand) {
	defer rs.wg.Done()
	for ctx.Err() == nil {
		p, err := startProcess(rs.bin, rs.kubeconfig, rs.config, replicaLog(slot), func(p *process) {
			rs.onLeader(slot, time.Now())
		})
		if err != nil {
			rs.problem(fmt.Sprintf("replica %d: %v", slot, err))
			return
		}
		rs.mu.Lock()
		rs.slots[slot] = p
		rs.starts++
		rs.mu.Unlock()
		<-p.done
		rs.mu.Lock()
		rs.slots[slot] = nil
		rs.mu.Unlock()
		delay := 500 * time.Millisecond
		if p.killed.Load() {
			delay = time.Duration(rng.IntN(2000)) * time.Millisecond
		} else {
			rs.explainExit(slot, p)
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
	}
}

// explainExit records why a process ended by itself. Losing the lease
// ends a leader on purpose; failing to reach the API server while it or
// etcd restarts is expected too. Anything else (a panic, an exit during
// calm) is a problem.
func (rs *replicaSet) explainExit(slot int, p *process) {
	tail := p.out.tail()
	now := time.Now()
	what := fmt.Sprintf("replica %d (pid %d, up %s) exited by itself: %v", slot, p.cmd.Process.Pid,
		now.Sub(p.started).Round(time.Millisecond), p.err)
	switch {
	case strings.Contains(tail, "panic:") || strings.Contains(tail, "fatal error:"):
		rs.problem(what + "\n" + tail)
	case strings.Contains(tail, "leader election lost"), rs.outage(p.started), rs.outage(now):
		rs.mu.Lock()
		rs.exits = append(rs.exits, what)
		rs.mu.Unlock()
	default:
		rs.problem(what + " with the control plane up\n" + tail)
	}
}

func (rs *replicaSet) problem(s string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.problems = append(rs.problems, s)
}

// pick chooses the process to kill: the leader when asked and known,
// otherwise a random running replica. It returns nil when none runs.
func (rs *replicaSet) pick(rng *rand.Rand, leader bool) (*process, int) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var running []int
	for i, p := range rs.slots {
		if p == nil {
			continue
		}
		if leader && p.leader.Load() {
			return p, i
		}
		running = append(running, i)
	}
	if len(running) == 0 {
		return nil, -1
	}
	i := running[rng.IntN(len(running))]
	return rs.slots[i], i
}

// leaderRunning reports whether a running process holds the lease.
func (rs *replicaSet) leaderRunning() bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, p := range rs.slots {
		if p != nil && p.leader.Load() {
			return true
		}
	}
	return false
}

// stop ends the supervisors (ctx must be done) and kills what runs,
// including a process a supervisor was starting as ctx ended.
func (rs *replicaSet) stop() {
	done := make(chan struct{})
	go func() { rs.wg.Wait(); close(done) }()
	for {
		rs.mu.Lock()
		procs := append([]*process(nil), rs.slots...)
		rs.mu.Unlock()
		for _, p := range procs {
			if p != nil {
				_ = p.kill()
			}
		}
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// report returns the starts, the explained exits and the problems.
func (rs *replicaSet) report() (int, []string, []string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.starts, append([]string(nil), rs.exits...), append([]string(nil), rs.problems...)
}
