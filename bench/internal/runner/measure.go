package runner

import (
	"runtime"
	"sync"
	"time"

	"github.com/kuota-dev/kuota/bench/internal/procstat"
	"github.com/kuota-dev/kuota/bench/internal/summary"
)

const mib = 1 << 20

// sampler reads a process's CPU and memory at a fixed period and keeps
// the high-water mark of its resident memory, so that the peak is known
// even if the process dies before its exit status can be read. With
// onGrowth, it calls it (on its own goroutine, sampling paused) each time
// the resident memory passes the last mark by a tenth: the manager's heap
// profile at its peak, not only at the end.
type sampler struct {
	pid      int
	mu       sync.Mutex
	peak     int64
	onGrowth func()
	mark     int64
	stop     chan struct{}
	done     chan struct{}
}

// growthStep is how much the resident memory grows, over the last mark,
// before onGrowth is called again.
const growthStep = 0.1

func startSampler(pid int, every time.Duration, onGrowth func()) *sampler {
	s := &sampler{pid: pid, onGrowth: onGrowth, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			s.read()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) read() {
	smp, err := procstat.Read(s.pid)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.peak = max(s.peak, smp.PeakRSSBytes, smp.RSSBytes)
	grew := s.onGrowth != nil && float64(smp.RSSBytes) > float64(s.mark)*(1+growthStep)
	if grew {
		s.mark = smp.RSSBytes
	}
	s.mu.Unlock()
	if grew {
		s.onGrowth()
	}
}

// Stop ends the sampling and returns the peak resident memory in bytes.
func (s *sampler) Stop() int64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// snapshot is the CPU state at one end of the run.
type snapshot struct {
	manager, apiServer, etcd procstat.Sample
	machine                  procstat.Machine
}

// take reads the processes that are known (pid > 0) and the machine;
// what cannot be read stays zero.
func take(managerPID, apiServerPID, etcdPID int) snapshot {
	var s snapshot
	read := func(pid int) procstat.Sample {
		if pid <= 0 {
			return procstat.Sample{}
		}
		smp, _ := procstat.Read(pid)
		return smp
	}
	s.manager, s.apiServer, s.etcd = read(managerPID), read(apiServerPID), read(etcdPID)
	s.machine, _ = procstat.ReadMachine()
	return s
}

// controlPlaneProcess is the figures of the API server or etcd from the
// snapshots at both ends of the run; nil when the process was not found.
func controlPlaneProcess(pid int, start, end procstat.Sample) *summary.Process {
	if pid <= 0 || end.CPU == 0 {
		return nil
	}
	return &summary.Process{CPUSeconds: end.CPU.Seconds(), RunCPUSeconds: (end.CPU - start.CPU).Seconds(),
		PeakRSSMiB: float64(end.PeakRSSBytes) / mib}
}

// machineLoad is the machine's CPU between the snapshots.
func machineLoad(start, end procstat.Machine) *summary.Machine {
	total := end.Total - start.Total
	if total <= 0 {
		return nil
	}
	m := &summary.Machine{CPUs: runtime.NumCPU(), BusyCPUSeconds: (end.Busy - start.Busy).Seconds(),
		BusyPercent: 100 * float64(end.Busy-start.Busy) / float64(total)}
	m.LoadAverage, _ = procstat.LoadAverage()
	return m
}
